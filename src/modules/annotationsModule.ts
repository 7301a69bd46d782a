import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { addRelationOperation, addRelationSurfaces } from '../../commands/annotations/addRelation.js';
import { annotateChunkOperation, annotateChunkSurfaces } from '../../commands/annotations/annotateChunk.js';
import { annotateChunksOperation, annotateChunksSurfaces } from '../../commands/annotations/annotateChunks.js';
import { createSessionRepository } from '../../commands/annotations/sessionRepository.js';
import { renameSessionOperation, renameSessionSurfaces } from '../../commands/annotations/renameSession.js';
import { startSessionOperation, startSessionSurfaces } from '../../commands/annotations/startSession.js';
import { annotationChunkLists } from '../../projections/annotations/annotationChunkLists.js';
import { annotationChunks } from '../../projections/annotations/annotationChunks.js';
import { annotationSessions } from '../../projections/annotations/annotationSessions.js';
import { annotationHistoryOperation, annotationHistorySurfaces } from '../../queries/annotations/annotationHistory.js';
import { diffAnnotationsOperation, diffAnnotationsSurfaces } from '../../queries/annotations/diffAnnotations.js';
import { exportAnnotationsOperation, exportAnnotationsSurfaces } from '../../queries/annotations/exportAnnotations.js';
import { getProgressOperation, getProgressSurfaces } from '../../queries/annotations/getAnnotationProgress.js';
import { annotationStream, SessionNotFoundError } from '../domain/annotations.js';
import type { Position } from '../domain/position.js';
import type { LedgerModule } from '../module.js';
import { callOperation, type Operation } from '../operations.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';
import type { ChunkSource } from '../ports/chunkSource.js';
import type { EventStore } from '../ports/eventStore.js';
import { chunkSourceFromOperations } from './chunkSourceFromOperations.js';

/** The annotation tools answer errors as `{type, message, issues?}`. */
const withSeedErrors = (operation: Operation): Operation => ({ ...operation, mcpErrors: 'annotations' });

/** A session of another project is as unknown to the caller as a missing one. */
/** Sessions whose project this process has looked up: a session never changes project. */
const KNOWN_SESSION_PROJECTS = 1_000;

const inCallersProject = (store: EventStore) => {
  const projects = new Map<string, string>();
  const projectOf = async (sessionId: string): Promise<string | null> => {
    const known = projects.get(sessionId);
    if (known !== undefined) return known;
    const [first] = await store.readStream(annotationStream(sessionId), { maxCount: 1 });
    if (!first) return null;
    projects.set(sessionId, first.metadata.project);
    if (projects.size > KNOWN_SESSION_PROJECTS) projects.delete(projects.keys().next().value!);
    return first.metadata.project;
  };
  return (operation: Operation): Operation => {
    if (!('sessionId' in operation.input.shape)) return operation;
    return {
      ...operation,
      run: async (input, context) => {
        const { sessionId } = input as { sessionId?: unknown };
        if (typeof sessionId === 'string') {
          const project = await projectOf(sessionId);
          if (project !== null && project !== context.project) throw new SessionNotFoundError(sessionId);
        }
        return callOperation(operation, input, context, { onBehalf: true });
      },
    };
  };
};

export interface AnnotationsModuleOptions {
  /** Lets sessions start from indexed documents or a query; without it only explicit chunks work. */
  chunkSource?: ChunkSource;
}

/** Annotation sessions: commands, read models, the annotation MCP tools, history and time travel; their routes and verbs are the operations' own. */
export const createAnnotationsModule = ({ chunkSource }: AnnotationsModuleOptions = {}): LedgerModule => ({
  name: 'annotations',
  setup: async (context) => {
    const { db, store, readModels, config, keyring } = context;
    const sessions = createSessionRepository(store);
    const vocabulary = config.annotations;
    const reads = {
      store,
      readModels,
      keyring,
      waitForProjections: (position: Position) => context.waitForProjections(position),
      readSession: sessions.read,
    };
    // Sessions start from the caller's project's documents.
    const startSessionIn = (project: string) =>
      startSessionOperation(store, chunkSource ?? chunkSourceFromOperations(context.features, project));
    const startSessionDefault = startSessionIn(DEFAULT_PROJECT);
    const startSession: typeof startSessionDefault = {
      ...startSessionDefault,
      run: (input, call) => callOperation(startSessionIn(call.project), input, call, { onBehalf: true }),
    };
    const operations = [
      startSession,
      annotateChunkOperation(sessions, vocabulary, keyring),
      annotateChunksOperation(sessions, vocabulary, keyring),
      addRelationOperation(sessions),
      renameSessionOperation(sessions),
      getProgressOperation(reads),
      exportAnnotationsOperation(reads),
      annotationHistoryOperation(store, keyring),
      diffAnnotationsOperation(store, keyring),
    ]
      .map(inCallersProject(store))
      .map(withSeedErrors);
    return {
      projections: [
        await postgresDocumentProjection(db, annotationSessions),
        await postgresDocumentProjection(db, annotationChunkLists),
        await postgresDocumentProjection(db, annotationChunks),
      ],
      operations,
    };
  },
  surfaces: [
    startSessionSurfaces,
    annotateChunkSurfaces,
    annotateChunksSurfaces,
    addRelationSurfaces,
    getProgressSurfaces,
    exportAnnotationsSurfaces,
    annotationHistorySurfaces,
    diffAnnotationsSurfaces,
    renameSessionSurfaces,
  ],
  commandGroups: { annotations: 'annotation sessions: annotate chunks, audit and time-travel' },
});

export const annotationsModule = createAnnotationsModule();

import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { addRelationOperation } from '../../commands/addRelation.js';
import { annotateChunkOperation } from '../../commands/annotateChunk.js';
import { annotateChunksOperation } from '../../commands/annotateChunks.js';
import { annotationErrorObject, type ExportedChunk } from '../domain/annotationFields.js';
import type { AnnotateChunksOutput } from '../../commands/annotateChunks.js';
import { createSessionRepository } from '../engine/sessionRepository.js';
import { startSessionOperation, type StartSessionOutput } from '../../commands/startSession.js';
import { annotationChunkLists } from '../../projections/annotationChunkLists.js';
import { annotationChunks } from '../../projections/annotationChunks.js';
import { annotationSessions } from '../../projections/annotationSessions.js';
import { annotationHistoryOperation, type AnnotationHistory } from '../../queries/annotationHistory.js';
import { diffAnnotationsOperation, type AnnotationDiff } from '../../queries/diffAnnotations.js';
import { exportAnnotationsOperation } from '../../queries/exportAnnotations.js';
import { getProgressOperation } from '../../queries/getAnnotationProgress.js';
import type { Progress } from '../domain/annotationProgress.js';
import { annotationStream, SessionNotFoundError } from '../domain/annotations.js';
import type { Position } from '../domain/position.js';
import { fields, table } from '../cli/format.js';
import { printResult } from '../cli/output.js';
import { callerContext } from '../http/api/guardOtherSurfaces.js';
import type { LedgerModule, WithLedger } from '../module.js';
import { DEFAULT_PROJECT, type Operation } from '../operations.js';
import type { ChunkSource } from '../ports/chunkSource.js';
import type { EventStore } from '../ports/eventStore.js';
import { chunkSourceFromOperations } from './chunkSourceFromOperations.js';

/** Seed 003's tools answer errors as `{type, message, issues?}`. */
const withSeedErrors = (operation: Operation): Operation => ({
  ...operation,
  mcpError: (error, correlationId) => ({ ...annotationErrorObject(error, correlationId) }),
});

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
        return operation.run(input, context);
      },
    };
  };
};

const mountRoutes = (app: FastifyInstance, operations: ReadonlyMap<string, Operation>) => {
  const call = (name: string, input: unknown, request: FastifyRequest) =>
    operations.get(name)!.run(input as never, callerContext(request, 'rest'));
  type Params = { Params: { id: string } };
  type Query = Params & { Querystring: Record<string, string | undefined> };
  const base = '/api/v1/annotations/sessions';
  const body = (value: unknown) => (value && typeof value === 'object' ? value : {});
  const limit = (value: string | undefined) =>
    value === undefined || Number.isNaN(Number(value)) ? value : Number(value);

  app.post(base, async (request, reply) => reply.status(201).send(await call('start_session', request.body, request)));
  app.post<Params>(`${base}/:id/annotations`, (request) =>
    call('annotate_chunk', { ...body(request.body), sessionId: request.params.id }, request),
  );
  app.post<Params>(`${base}/:id/annotations/batch`, (request) =>
    call('annotate_chunks', { ...body(request.body), sessionId: request.params.id }, request),
  );
  app.post<Params>(`${base}/:id/relations`, (request) =>
    call('add_relation', { ...body(request.body), sessionId: request.params.id }, request),
  );
  app.get<Query>(`${base}/:id/progress`, (request) =>
    call('get_progress', { sessionId: request.params.id, asOf: request.query.asOf }, request),
  );
  app.get<Query>(`${base}/:id/export`, (request) =>
    call('export_annotations', { sessionId: request.params.id, asOf: request.query.asOf }, request),
  );
  app.get<Query>(`${base}/:id/history`, (request) =>
    call(
      'annotation_history',
      {
        sessionId: request.params.id,
        chunkId: request.query.chunkId,
        cursor: request.query.cursor,
        limit: limit(request.query.limit),
      },
      request,
    ),
  );
  app.get<Query>(`${base}/:id/diff`, (request) =>
    call('diff_annotations', { sessionId: request.params.id, from: request.query.from, to: request.query.to }, request),
  );
};

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

const list = (values: readonly string[]) => values.join(', ');

const chunkText = (chunk: ExportedChunk) =>
  fields({
    chunk: chunk.chunk_id,
    categories: list(chunk.categories),
    labels: list(chunk.labels),
    subtypes: list(Object.entries(chunk.subtypes).map(([category, subtype]) => `${category}=${subtype}`)),
    keywords: list(chunk.keywords),
    tags: list(chunk.tags),
    notes: chunk.notes,
    summary: chunk.summary,
    forgotten: chunk.forgotten,
  });

const batchText = (result: AnnotateChunksOutput) =>
  [
    `${result.successCount} annotated, ${result.errorCount} failed`,
    ...result.results.flatMap((r) => (r.success ? [] : [`  ${r.chunkId}: ${r.error.message}`])),
  ].join('\n');

const progressText = (p: Progress) =>
  fields({
    annotated: `${p.annotatedChunks} of ${p.totalChunks} chunks (${p.completionPercentage}%)`,
    pending: p.pendingChunks ? `${p.pendingChunks}: ${list(p.pendingChunkIds)}` : '0',
  });

const exportText = ({ chunks }: { chunks: ExportedChunk[] }) =>
  table(
    [
      { header: 'chunk', value: (c) => c.chunk_id },
      { header: 'position', value: (c) => c.position },
      { header: 'categories', value: (c) => list(c.categories) },
      { header: 'labels', value: (c) => list(c.labels) },
      { header: 'tags', value: (c) => list(c.tags) },
      { header: 'notes', value: (c) => c.notes },
    ],
    chunks,
    'No chunks.',
  );

const changesText = (changes: Record<string, { from: unknown; to: unknown }> | undefined) =>
  Object.entries(changes ?? {})
    .map(([field, { from, to }]) => `${field}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}`)
    .join('; ');

const historyText = (page: AnnotationHistory) =>
  table(
    [
      { header: 'position', value: (e) => e.position },
      { header: 'occurred', value: (e) => e.occurredAt },
      { header: 'type', value: (e) => e.type },
      { header: 'actor', value: (e) => e.actor.subject },
      { header: 'chunk', value: (e) => e.chunkId },
      { header: 'changes', value: (e) => changesText(e.changes) },
    ],
    page.events,
    'No events.',
  ) + (page.nextCursor ? `\nMore: --cursor ${page.nextCursor}` : '');

const diffText = (diff: AnnotationDiff) => {
  const lines = [
    ...diff.added.map((d) => `+ ${d.chunkId}  ${changesText(d.changes)}`),
    ...diff.changed.map((d) => `~ ${d.chunkId}  ${changesText(d.changes)}`),
    ...diff.removed.map((d) => `- ${d.chunkId}  ${changesText(d.changes)}`),
  ];
  return lines.length ? lines.join('\n') : 'No changes.';
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

const mountCli = (program: Command, withLedger: WithLedger) => {
  const annotations = program
    .command('annotations')
    .description('annotation sessions: annotate chunks, audit and time-travel');
  annotations
    .command('start')
    .description(
      'start a session from a JSON config file ({"chunks": [{chunk_id, position, text}]}), document ids or a query',
    )
    .argument('[file]', 'config file: {"chunks": [...]} or {"config": {"chunks": [...]}}')
    .option('--documents <ids...>', 'every chunk of these indexed documents')
    .option('--query <query>', 'the indexed chunks that best match this query')
    .option('--limit <n>', 'with --query: how many chunks at most', (v) => Number(v))
    .option('--name <name>', 'a name for the session')
    .option('--json', 'print JSON')
    .action(async (file: string | undefined, options: Record<string, unknown>, command: Command) => {
      const fromFile = file ? (readJson(file) as Record<string, unknown>) : {};
      const config = 'config' in fromFile ? fromFile.config : fromFile;
      const input = {
        config: {
          ...(config as object),
          ...(options.documents ? { documentIds: options.documents } : {}),
          ...(options.query ? { query: options.query } : {}),
          ...(options.limit ? { limit: options.limit } : {}),
        },
        ...(options.name ? { name: options.name } : {}),
      };
      const started = await withLedger(command, (ledger) => ledger.run<StartSessionOutput>('start_session', input));
      printResult(started, options.json as boolean | undefined, (s) => `Started session ${s.sessionId} with ${s.chunkCount} chunks.`);
    });
  annotations
    .command('annotate')
    .description('annotate one chunk from options, or many from a JSON file ([{chunkId, categories, ...}])')
    .argument('<sessionId>')
    .argument('[chunkId]')
    .option('--file <file>', 'a JSON array of annotations (annotate_chunks)')
    .option('--category <category>', 'a category (repeatable)', collect)
    .option('--label <label>', 'a label (repeatable)', collect)
    .option('--subtype <category=subtype>', 'a subtype of a category (repeatable)', collect)
    .option('--keyword <keyword>', 'a keyword (repeatable)', collect)
    .option('--tag <tag>', 'a tag (repeatable)', collect)
    .option('--notes <notes>')
    .option('--summary <summary>')
    .option('--json', 'print JSON')
    .action(
      async (
        sessionId: string,
        chunkId: string | undefined,
        options: Record<string, unknown>,
        command: Command,
      ) => {
        const result = await withLedger(command, (ledger) => {
          if (options.file) {
            return ledger.run('annotate_chunks', {
              sessionId,
              annotations: readJson(options.file as string),
            });
          }
          const subtypes = options.subtype
            ? (Object.fromEntries((options.subtype as string[]).map((pair) => pair.split('=', 2))) as Record<
                string,
                string
              >)
            : undefined;
          return ledger.run('annotate_chunk', {
            sessionId,
            chunkId,
            categories: options.category,
            labels: options.label,
            subtypes,
            keywords: options.keyword,
            tags: options.tag,
            notes: options.notes,
            summary: options.summary,
          });
        });
        printResult(result, options.json as boolean | undefined, (r) =>
          'results' in (r as object) ? batchText(r as AnnotateChunksOutput) : chunkText(r as ExportedChunk),
        );
      },
    );
  const asOfQuery = (name: string, description: string) =>
    annotations
      .command(name)
      .description(description)
      .argument('<sessionId>')
      .option('--as-of <moment>', 'a position from `annotations history` or an ISO timestamp')
      .option('--json', 'print JSON')
      .action(async (sessionId: string, options: { asOf?: string; json?: boolean }, command: Command) => {
        const operation = name === 'progress' ? 'get_progress' : 'export_annotations';
        const result = await withLedger(command, async (ledger) => {
          return ledger.run(operation, { sessionId, asOf: options.asOf });
        });
        printResult(result, options.json, (r) =>
          name === 'progress' ? progressText(r as Progress) : exportText(r as { chunks: ExportedChunk[] }),
        );
      });
  asOfQuery('progress', 'totals, completion and pending chunks of a session, now or at a past moment');
  asOfQuery('export', 'the annotations of every chunk, now or exactly as they were at a past moment');
  annotations
    .command('history')
    .description('who changed which annotation when, for a session or one chunk')
    .argument('<sessionId>')
    .option('--chunk <chunkId>', 'only this chunk')
    .option('--limit <n>', 'events per page', (v) => Number(v))
    .option('--cursor <cursor>', 'continue from a previous page')
    .option('--json', 'print JSON')
    .action(
      async (
        sessionId: string,
        options: { chunk?: string; limit?: number; cursor?: string; json?: boolean },
        command: Command,
      ) => {
        const page = await withLedger(command, (ledger) =>
          ledger.run<AnnotationHistory>('annotation_history', {
            sessionId,
            chunkId: options.chunk,
            limit: options.limit,
            cursor: options.cursor,
          }),
        );
        printResult(page, options.json, historyText);
      },
    );
  annotations
    .command('diff')
    .description('chunks whose annotations were added, changed or removed between two moments')
    .argument('<sessionId>')
    .requiredOption('--from <moment>', 'the earlier moment: a position or an ISO timestamp')
    .option('--to <moment>', 'the later moment (default: now)')
    .option('--json', 'print JSON')
    .action(async (sessionId: string, options: { from: string; to?: string; json?: boolean }, command: Command) => {
      const { json, ...moments } = options;
      const diff = await withLedger(command, (ledger) =>
        ledger.run<AnnotationDiff>('diff_annotations', { sessionId, ...moments }),
      );
      printResult(diff, json, diffText);
    });
};

export interface AnnotationsModuleOptions {
  /** Lets sessions start from indexed documents or a query; without it only explicit chunks work. */
  chunkSource?: ChunkSource;
}

/** Annotation sessions: commands, read models, seed 003's MCP tools, history and time travel, REST and CLI. */
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
      startSessionOperation(store, chunkSource ?? chunkSourceFromOperations(context.operations, project));
    const startSession: Operation = {
      ...startSessionIn(DEFAULT_PROJECT),
      run: (input, call) => startSessionIn(call.project).run(input, call),
    };
    const operations = [
      startSession,
      annotateChunkOperation(sessions, vocabulary, keyring),
      annotateChunksOperation(sessions, vocabulary, keyring),
      addRelationOperation(sessions),
      getProgressOperation(reads),
      exportAnnotationsOperation(reads),
      annotationHistoryOperation(store, keyring),
      diffAnnotationsOperation(store, keyring),
    ]
      .map(inCallersProject(store))
      .map(withSeedErrors);
    const byName = new Map(operations.map((o) => [o.name, o]));
    return {
      projections: [
        await postgresDocumentProjection(db, annotationSessions),
        await postgresDocumentProjection(db, annotationChunkLists),
        await postgresDocumentProjection(db, annotationChunks),
      ],
      operations,
      routes: (app) => mountRoutes(app, byName),
    };
  },
  cli: mountCli,
});

export const annotationsModule = createAnnotationsModule();

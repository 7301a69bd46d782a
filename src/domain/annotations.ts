import { z } from 'zod';
import { IllegalStateError, NotFoundError, ValidationError, type InputIssue } from '../errors.js';
import { ProtectedTextSchema } from './protectedText.js';
import type { Stored, UpcastersOf } from './eventEnvelope.js';

export const RelationTypeSchema = z.enum(['dependencies', 'footnotes', 'references']);
export type RelationType = z.infer<typeof RelationTypeSchema>;

/**
 * The words annotators may use. Events store plain strings, so a deployment can change its
 * vocabulary (`[annotations]` in ctx.toml) without invalidating what was written before.
 */
export interface AnnotationVocabulary {
  categories: readonly string[];
  labels: readonly string[];
  subtypes: readonly string[];
}

export const DEFAULT_VOCABULARY: AnnotationVocabulary = {
  categories: ['fee_schedule', 'footnotes'],
  labels: ['Fee Schedule', 'Footnotes'],
  subtypes: [
    'participant_fee',
    'legal_regulatory_fee',
    'port_fees_and_other_services',
    'market_data_fees',
    'fees_and_rebates',
    'reference',
  ],
};

export const SessionChunkSchema = z.object({
  chunkId: z.string().min(1),
  position: z.number().int().nonnegative(),
  text: z.string(),
});
export type SessionChunk = z.infer<typeof SessionChunkSchema>;

/** The annotatable fields; a `ChunkAnnotated` event carries only the ones that changed. */
export const AnnotationFieldsSchema = z.object({
  categories: z.array(z.string()),
  labels: z.array(z.string()),
  /** Subtype per category, e.g. `{ fee_schedule: 'participant_fee' }`. */
  subtypes: z.record(z.string(), z.string()),
  keywords: z.array(z.string()),
  tags: z.array(z.string()),
  notes: z.string(),
  summary: z.string(),
});
export type AnnotationFields = z.infer<typeof AnnotationFieldsSchema>;
export type AnnotationField = keyof AnnotationFields;
export const ANNOTATION_FIELDS = Object.keys(AnnotationFieldsSchema.shape) as AnnotationField[];

/** Free text: sealed with its author's data key, so that forgetting the author makes it unreadable. */
export const PROTECTED_FIELDS = ['notes', 'summary'] as const;
export type ProtectedField = (typeof PROTECTED_FIELDS)[number];

/** The fields as events, session state and read models hold them: free text sealed. */
export const StoredAnnotationFieldsSchema = AnnotationFieldsSchema.extend({
  notes: ProtectedTextSchema,
  summary: ProtectedTextSchema,
});
export type StoredAnnotationFields = z.infer<typeof StoredAnnotationFieldsSchema>;

export const emptyAnnotation = (): AnnotationFields => ({
  categories: [],
  labels: [],
  subtypes: {},
  keywords: [],
  tags: [],
  notes: '',
  summary: '',
});

export const SessionSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('chunks') }),
  z.object({ kind: z.literal('documents'), documentIds: z.array(z.string()).min(1) }),
  z.object({ kind: z.literal('query'), query: z.string().min(1), limit: z.number().int().positive() }),
]);
export type SessionSource = z.infer<typeof SessionSourceSchema>;

export const AnnotationSessionStartedSchema = z.object({
  type: z.literal('AnnotationSessionStarted'),
  schemaVersion: z.literal(1),
  data: z.object({
    sessionId: z.uuid(),
    name: z.string().nullable(),
    source: SessionSourceSchema,
    /** Chunks follow in `SessionChunksAdded` events; the session is open once all have arrived. */
    chunkCount: z.number().int().positive(),
  }),
});

export const SessionChunksAddedSchema = z.object({
  type: z.literal('SessionChunksAdded'),
  schemaVersion: z.literal(1),
  data: z.object({
    sessionId: z.uuid(),
    chunks: z.array(SessionChunkSchema).min(1),
  }),
});

/** One chunk's part of a `ChunkAnnotated` event: only the fields that changed, free text sealed. */
export const ChunkAnnotationSchema = z.object({
  chunkId: z.string().min(1),
  /** Empty when a pending chunk is marked annotated as it is. */
  changes: StoredAnnotationFieldsSchema.partial(),
});
export type ChunkAnnotation = z.infer<typeof ChunkAnnotationSchema>;

/**
 * The chunks one command annotated, in the order it annotated them (a chunk may appear twice).
 * Version 3 holds a list, so a batch is one event; version 2 held one chunk; version 1 held notes
 * and summaries as plain strings where version 2 seals them.
 */
export const ChunkAnnotatedSchema = z.object({
  type: z.literal('ChunkAnnotated'),
  schemaVersion: z.literal(3),
  data: z.object({
    sessionId: z.uuid(),
    annotations: z.array(ChunkAnnotationSchema).min(1),
  }),
});

/**
 * Version 1's plain notes are valid version 2 values as they are: they stay readable, and since
 * their bytes are in the event log, forgetting their author cannot make them unreadable.
 */
export const ANNOTATION_UPCASTERS: UpcastersOf<AnnotationEvent['type']> = {
  ChunkAnnotated: {
    1: (data) => data,
    2: ({ sessionId, chunkId, changes }) => ({ sessionId, annotations: [{ chunkId, changes }] }),
  },
};

export const RelationAddedSchema = z.object({
  type: z.literal('RelationAdded'),
  schemaVersion: z.literal(1),
  data: z.object({
    sessionId: z.uuid(),
    sourceChunkId: z.string().min(1),
    targetChunkId: z.string().min(1),
    relationType: RelationTypeSchema,
  }),
});

export const SessionRenamedSchema = z.object({
  type: z.literal('SessionRenamed'),
  schemaVersion: z.literal(1),
  data: z.object({ sessionId: z.uuid(), name: z.string().min(1) }),
});

export const AnnotationEventSchemas = [
  AnnotationSessionStartedSchema,
  SessionChunksAddedSchema,
  ChunkAnnotatedSchema,
  RelationAddedSchema,
  SessionRenamedSchema,
] as const;

export type AnnotationEvent =
  | z.infer<typeof AnnotationSessionStartedSchema>
  | z.infer<typeof SessionChunksAddedSchema>
  | z.infer<typeof ChunkAnnotatedSchema>
  | z.infer<typeof RelationAddedSchema>
  | z.infer<typeof SessionRenamedSchema>;

export const ANNOTATION_EVENT_TYPES = AnnotationEventSchemas.map((s) => s.shape.type.value);

export const annotationStream = (sessionId: string): string => `annotation-${sessionId}`;

/** One chunk of a session as the command side sees it. */
export interface ChunkState {
  chunkId: string;
  position: number;
  text: string;
  annotated: boolean;
  fields: StoredAnnotationFields;
  /** Targets per relation type, in the order they were added. */
  relations: Partial<Record<RelationType, string[]>>;
}

export interface SessionState {
  sessionId: string | null;
  name: string | null;
  expectedChunks: number;
  chunks: Map<string, ChunkState>;
  /** Ids of the chunks not yet annotated, in position order: progress without a scan. */
  pending: Set<string>;
}

export const initialSessionState = (): SessionState => ({
  sessionId: null,
  name: null,
  expectedChunks: 0,
  chunks: new Map(),
  pending: new Set(),
});

/** Folds one chunk's annotation into the state, in place (see `evolveSession`). */
export const annotateChunkState = (state: SessionState, { chunkId, changes }: ChunkAnnotation): void => {
  const chunk = state.chunks.get(chunkId);
  if (!chunk) return;
  chunk.annotated = true;
  chunk.fields = { ...chunk.fields, ...changes };
  state.pending.delete(chunkId);
};

/**
 * Folds one event into the state, updating it in place: a session holds up to tens of thousands
 * of chunks, and copying them for every event would make folding a long stream quadratic. Every
 * fold starts from a fresh `initialSessionState()`, so nothing else sees the mutation.
 */
export const evolveSession = (
  state: SessionState,
  event: Stored<AnnotationEvent> | AnnotationEvent,
): SessionState => {
  switch (event.type) {
    case 'AnnotationSessionStarted':
      state.sessionId = event.data.sessionId;
      state.name = event.data.name;
      state.expectedChunks = event.data.chunkCount;
      return state;
    case 'SessionChunksAdded':
      for (const chunk of event.data.chunks) {
        state.chunks.set(chunk.chunkId, {
          ...chunk,
          annotated: false,
          fields: emptyAnnotation(),
          relations: {},
        });
        state.pending.add(chunk.chunkId);
      }
      return state;
    case 'ChunkAnnotated':
      for (const annotation of event.data.annotations) annotateChunkState(state, annotation);
      return state;
    case 'RelationAdded': {
      const chunk = state.chunks.get(event.data.sourceChunkId);
      if (chunk) {
        const targets = chunk.relations[event.data.relationType] ?? [];
        if (!targets.includes(event.data.targetChunkId)) {
          chunk.relations = {
            ...chunk.relations,
            [event.data.relationType]: [...targets, event.data.targetChunkId],
          };
        }
      }
      return state;
    }
    case 'SessionRenamed':
      state.name = event.data.name;
      return state;
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
};

/** Errors with the names the annotation tools' clients match on (`type` in its error objects). */
export class SessionNotFoundError extends NotFoundError {
  override name = 'SessionNotFound';
  constructor(sessionId: string) {
    super(`Session '${sessionId}' not found`, { sessionId });
  }
}

export class ChunkNotFoundError extends NotFoundError {
  override name = 'ChunkNotFound';
  constructor(sessionId: string, chunkId: string) {
    super(`Chunk '${chunkId}' not found in session '${sessionId}'`, { sessionId, chunkId });
  }
}

export type IssueDetail = InputIssue;

export class InvalidConfigError extends ValidationError {
  override name = 'InvalidConfig';
  constructor(issues: IssueDetail[]) {
    super('Config validation failed', { issues });
  }
}

export class SessionIncompleteError extends IllegalStateError {
  override name = 'SessionIncomplete';
  constructor(sessionId: string, received: number, expected: number) {
    super(
      `Session '${sessionId}' has ${received} of its ${expected} chunks: it was never completely created`,
      {
        sessionId,
      },
    );
  }
}

/** The session, or SessionNotFound; also refuses one whose chunks never all arrived. */
export const requireOpenSession = (state: SessionState, sessionId: string): SessionState => {
  if (state.sessionId === null) throw new SessionNotFoundError(sessionId);
  if (state.chunks.size < state.expectedChunks) {
    throw new SessionIncompleteError(sessionId, state.chunks.size, state.expectedChunks);
  }
  return state;
};

export const requireChunk = (state: SessionState, sessionId: string, chunkId: string): ChunkState => {
  const chunk = state.chunks.get(chunkId);
  if (!chunk) throw new ChunkNotFoundError(sessionId, chunkId);
  return chunk;
};

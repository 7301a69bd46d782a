import { z } from 'zod';
import {
  ANNOTATION_FIELDS,
  annotateChunkState,
  evolveSession,
  initialSessionState,
  PROTECTED_FIELDS,
  SessionNotFoundError,
  type AnnotationEvent,
  type SessionState,
} from '../../src/domain/annotations.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { Keyring } from '../../src/ports/keyring.js';
import type { ProtectedText } from '../../src/domain/protectedText.js';
import { SessionIdSchema } from '../../src/domain/annotationFields.js';
import { readSessionEvents } from '../../src/services/sessionReads.js';
import { parseInput } from '../../src/validation.js';

export const AnnotationHistoryInputSchema = z.object({
  sessionId: SessionIdSchema,
  chunkId: z.string().min(1).optional().describe('Only the events that touch this chunk'),
  cursor: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'not a cursor returned by this query')
    .optional()
    .describe('nextCursor of a previous page'),
  limit: z.number().int().min(1).max(1_000).default(100),
});

export const FieldChangeSchema = z.object({ from: z.unknown(), to: z.unknown() });

export const AnnotationHistoryEntrySchema = z.object({
  position: z.string().describe('Pass as asOf to see the session as it was right after this event'),
  revision: z.number().int(),
  type: z.string(),
  occurredAt: z.string(),
  recordedAt: z.string(),
  actor: z.object({ subject: z.string(), tenant: z.string().nullable(), via: z.string() }),
  commandId: z.string(),
  correlationId: z.string(),
  chunkId: z.string().optional(),
  changes: z.record(z.string(), FieldChangeSchema).optional(),
  relation: z
    .object({ sourceChunkId: z.string(), targetChunkId: z.string(), relationType: z.string() })
    .optional(),
  chunkIds: z.array(z.string()).optional(),
  name: z.string().nullable().optional(),
  chunkCount: z.number().int().optional(),
  forgotten: z
    .literal(true)
    .optional()
    .describe('Present when free text of this change was forgotten: those values are null'),
});
export type AnnotationHistoryEntry = z.infer<typeof AnnotationHistoryEntrySchema>;

export const AnnotationHistoryOutputSchema = z.object({
  events: z.array(AnnotationHistoryEntrySchema),
  nextCursor: z.string().nullable(),
});
export type AnnotationHistory = z.infer<typeof AnnotationHistoryOutputSchema>;

/** Whether an event touches the chunk (a ChunkAnnotated event is told apart annotation by annotation). */
const touches = (
  event: StoredEvent<Exclude<AnnotationEvent, { type: 'ChunkAnnotated' }>>,
  chunkId: string,
): boolean => {
  switch (event.type) {
    case 'AnnotationSessionStarted':
    case 'SessionRenamed':
      return false;
    case 'SessionChunksAdded':
      return event.data.chunks.some((c) => c.chunkId === chunkId);
    case 'RelationAdded':
      return event.data.sourceChunkId === chunkId || event.data.targetChunkId === chunkId;
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
};

/** Where an entry stands: its event's revision and, in a ChunkAnnotated event, its annotation's index. */
interface EntryPlace {
  revision: bigint;
  index: number;
}

const isAfter = (place: EntryPlace, cursor: EntryPlace) =>
  place.revision > cursor.revision || (place.revision === cursor.revision && place.index > cursor.index);

/**
 * The session's history entries, oldest first, folding `state` as it goes: one per event, except
 * that a ChunkAnnotated event gives one per chunk it annotated, each with its fields before and after.
 */
function* historyEntries(
  events: readonly StoredEvent<AnnotationEvent>[],
  state: SessionState,
  chunkId: string | undefined,
): Generator<EntryPlace & { entry: AnnotationHistoryEntry }> {
  for (const event of events) {
    const entry: AnnotationHistoryEntry = {
      position: event.position,
      revision: Number(event.revision),
      type: event.type,
      occurredAt: event.metadata.occurredAt,
      recordedAt: event.recordedAt,
      actor: event.metadata.actor,
      commandId: event.metadata.commandId,
      correlationId: event.metadata.correlationId,
    };
    const place = { revision: event.revision, index: 0 };
    if (event.type === 'ChunkAnnotated') {
      for (const [index, annotation] of event.data.annotations.entries()) {
        const before = state.chunks.get(annotation.chunkId)?.fields;
        annotateChunkState(state, annotation);
        if (chunkId !== undefined && annotation.chunkId !== chunkId) continue;
        const changes: Record<string, { from: unknown; to: unknown }> = {};
        for (const field of ANNOTATION_FIELDS) {
          if (field in annotation.changes)
            changes[field] = { from: before?.[field], to: annotation.changes[field] };
        }
        yield { ...place, index, entry: { ...entry, chunkId: annotation.chunkId, changes } };
      }
      continue;
    }
    evolveSession(state, event);
    if (chunkId !== undefined && !touches(event, chunkId)) continue;
    switch (event.type) {
      case 'AnnotationSessionStarted':
        yield { ...place, entry: { ...entry, name: event.data.name, chunkCount: event.data.chunkCount } };
        break;
      case 'SessionChunksAdded':
        yield {
          ...place,
          entry: {
            ...entry,
            chunkIds: event.data.chunks.map((c) => c.chunkId).filter((id) => !chunkId || id === chunkId),
          },
        };
        break;
      case 'RelationAdded':
        yield {
          ...place,
          entry: {
            ...entry,
            chunkId: event.data.sourceChunkId,
            relation: {
              sourceChunkId: event.data.sourceChunkId,
              targetChunkId: event.data.targetChunkId,
              relationType: event.data.relationType,
            },
          },
        };
        break;
      case 'SessionRenamed':
        yield { ...place, entry: { ...entry, name: event.data.name } };
        break;
      default: {
        const unknown: never = event;
        return unknown;
      }
    }
  }
}

/** Free text of the entries' changes opened in place: null, and the entry marked, where it was forgotten. */
const openChanges = async (entries: AnnotationHistoryEntry[], keyring: Keyring): Promise<void> => {
  const protectedChanges = entries.flatMap((entry) =>
    PROTECTED_FIELDS.flatMap((field) => {
      const change = entry.changes?.[field];
      return change ? [{ entry, change }] : [];
    }),
  );
  const values = protectedChanges.flatMap(({ change }) => [change.from, change.to]) as (
    ProtectedText | undefined
  )[];
  const opener = await keyring.opener(values.filter((v) => v !== undefined));
  for (const { entry, change } of protectedChanges) {
    for (const side of ['from', 'to'] as const) {
      const value = change[side] as ProtectedText | undefined;
      if (value === undefined) continue;
      change[side] = opener.open(value);
      if (change[side] === null) entry.forgotten = true;
    }
  }
};

/**
 * Who changed what, when: every event of a session (or of one chunk), oldest first, each field
 * change with its value before and after. The cursor names the last entry returned: its event's
 * revision and, within a ChunkAnnotated event, its annotation's index.
 */
export const annotationHistory = async (
  store: EventStore,
  keyring: Keyring,
  rawInput: unknown,
): Promise<AnnotationHistory> => {
  const { sessionId, chunkId, cursor, limit } = parseInput(AnnotationHistoryInputSchema, rawInput);
  const events = await readSessionEvents(store, sessionId);
  if (events.length === 0) throw new SessionNotFoundError(sessionId);
  // A cursor without an index (as earlier versions gave) names a whole event.
  const [revision = '-1', index] = cursor?.split('.') ?? [];
  const after = { revision: BigInt(revision), index: index === undefined ? Infinity : Number(index) };
  const entries: AnnotationHistoryEntry[] = [];
  let last: EntryPlace | undefined;
  let more = false;
  for (const { entry, ...place } of historyEntries(events, initialSessionState(), chunkId)) {
    if (!isAfter(place, after)) continue;
    if (entries.length === limit) {
      more = true;
      break;
    }
    entries.push(entry);
    last = place;
  }
  await openChanges(entries, keyring);
  return { events: entries, nextCursor: more && last ? `${last.revision}.${last.index}` : null };
};

const changesText = (changes: Record<string, { from: unknown; to: unknown }> | undefined) =>
  Object.entries(changes ?? {})
    .map(([field, { from, to }]) => `${field}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}`)
    .join('; ');

export const annotationHistorySurfaces = {
  name: 'annotations.history',
  rest: {
    method: 'GET',
    path: '/annotations/sessions/{id}/history',
    summary: 'Who changed which annotation of a session when, a page at a time',
    params: { id: 'sessionId' },
    query: ['chunkId', 'cursor', 'limit'],
    errorFormat: 'tools',
  },
  cli: {
    command: ['annotations', 'history'],
    description: 'who changed which annotation when, for a session or one chunk',
    arguments: [{ name: 'sessionId', field: 'sessionId' }],
    options: [
      { flags: '--chunk <chunkId>', field: 'chunkId', description: 'only this chunk' },
      { flags: '--limit <n>', field: 'limit', parse: 'number', description: 'events per page' },
      { flags: '--cursor <cursor>', field: 'cursor', description: 'continue from a previous page' },
    ],
    print: {
      table: {
        rows: 'events',
        columns: {
          position: '{position}',
          occurred: '{occurredAt}',
          type: '{type}',
          actor: '{actor.subject}',
          chunk: '{chunkId}',
          changes: (e: AnnotationHistoryEntry) => changesText(e.changes),
        },
        empty: 'No events.',
        cursor: 'nextCursor',
      },
    },
  },
} as const satisfies OperationSurfaces;

export const annotationHistoryOperation = (store: EventStore, keyring: Keyring) =>
  defineOperation({
    ...annotationHistorySurfaces,
    title: 'Annotation history',
    description:
      'Every change to an annotation session, or to one of its chunks, oldest first: who, when, the position ' +
      '(usable as asOf), and each changed field with its value before and after.',
    toolset: 'annotations',
    writes: false,
    input: AnnotationHistoryInputSchema,
    output: AnnotationHistoryOutputSchema,
    run: (input) => annotationHistory(store, keyring, input),
  });

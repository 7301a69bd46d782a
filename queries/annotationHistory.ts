import { z } from 'zod';
import {
  ANNOTATION_FIELDS,
  evolveSession,
  initialSessionState,
  PROTECTED_FIELDS,
  SessionNotFoundError,
  type AnnotationEvent,
} from '../src/domain/annotations.js';
import type { StoredEvent } from '../src/domain/events.js';
import { defineOperation } from '../src/operations.js';
import type { EventStore } from '../src/ports/eventStore.js';
import type { Keyring } from '../src/protection/keyring.js';
import type { ProtectedText } from '../src/protection/protectedText.js';
import { parseOrThrow, SessionIdSchema } from '../commands/annotationFields.js';
import { readSessionEvents } from './annotationSessionFold.js';

export const AnnotationHistoryInputSchema = z.object({
  sessionId: SessionIdSchema,
  chunkId: z.string().min(1).optional().describe('Only the events that touch this chunk'),
  cursor: z
    .string()
    .regex(/^\d+$/, 'not a cursor returned by this query')
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

const touches = (event: StoredEvent<AnnotationEvent>, chunkId: string): boolean => {
  switch (event.type) {
    case 'AnnotationSessionStarted':
      return false;
    case 'SessionChunksAdded':
      return event.data.chunks.some((c) => c.chunkId === chunkId);
    case 'ChunkAnnotated':
      return event.data.chunkId === chunkId;
    case 'RelationAdded':
      return event.data.sourceChunkId === chunkId || event.data.targetChunkId === chunkId;
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
};

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
 * change with its value before and after. The cursor is the revision of the last event returned.
 */
export const annotationHistory = async (
  store: EventStore,
  keyring: Keyring,
  rawInput: unknown,
): Promise<AnnotationHistory> => {
  const { sessionId, chunkId, cursor, limit } = parseOrThrow(AnnotationHistoryInputSchema, rawInput);
  const events = await readSessionEvents(store, sessionId);
  if (events.length === 0) throw new SessionNotFoundError(sessionId);
  const after = cursor === undefined ? -1n : BigInt(cursor);
  const state = initialSessionState();
  const entries: AnnotationHistoryEntry[] = [];
  let more = false;
  for (const event of events) {
    const before = event.type === 'ChunkAnnotated' ? state.chunks.get(event.data.chunkId)?.fields : undefined;
    evolveSession(state, event);
    if (event.revision <= after || (chunkId !== undefined && !touches(event, chunkId))) continue;
    if (entries.length === limit) {
      more = true;
      break;
    }
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
    switch (event.type) {
      case 'AnnotationSessionStarted':
        entries.push({ ...entry, name: event.data.name, chunkCount: event.data.chunkCount });
        break;
      case 'SessionChunksAdded':
        entries.push({
          ...entry,
          chunkIds: event.data.chunks.map((c) => c.chunkId).filter((id) => !chunkId || id === chunkId),
        });
        break;
      case 'ChunkAnnotated': {
        const changes: Record<string, { from: unknown; to: unknown }> = {};
        for (const field of ANNOTATION_FIELDS) {
          if (field in event.data.changes)
            changes[field] = { from: before?.[field], to: event.data.changes[field] };
        }
        entries.push({ ...entry, chunkId: event.data.chunkId, changes });
        break;
      }
      case 'RelationAdded':
        entries.push({
          ...entry,
          chunkId: event.data.sourceChunkId,
          relation: {
            sourceChunkId: event.data.sourceChunkId,
            targetChunkId: event.data.targetChunkId,
            relationType: event.data.relationType,
          },
        });
        break;
      default: {
        const unknown: never = event;
        return unknown;
      }
    }
  }
  await openChanges(entries, keyring);
  const last = entries[entries.length - 1];
  return { events: entries, nextCursor: more && last ? String(last.revision) : null };
};

export const annotationHistoryOperation = (store: EventStore, keyring: Keyring) =>
  defineOperation({
    name: 'annotation_history',
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

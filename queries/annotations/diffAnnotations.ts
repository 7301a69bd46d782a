import { z } from 'zod';
import {
  ANNOTATION_FIELDS,
  emptyAnnotation,
  PROTECTED_FIELDS,
  SessionNotFoundError,
  type SessionState,
  type StoredAnnotationFields,
} from '../../src/domain/annotations.js';
import { AsOfSchema, parseAsOf, type AsOf } from '../../src/domain/asOf.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { protectedValuesOf } from '../../src/domain/annotationText.js';
import type { Keyring } from '../../src/ports/keyring.js';
import type { ProtectedText } from '../../src/domain/protectedText.js';
import { SessionIdSchema, sameValue } from '../../src/domain/annotationFields.js';
import { FieldChangeSchema } from './annotationHistory.js';
import { foldSessionUntil } from '../../src/domain/annotationSessionFold.js';
import { readSessionEvents } from '../../src/services/sessionReads.js';
import { parseInput } from '../../src/validation.js';

export const DiffAnnotationsInputSchema = z.object({
  sessionId: SessionIdSchema,
  from: AsOfSchema.describe('The earlier moment: a position from annotations.history or an ISO timestamp'),
  to: AsOfSchema.optional().describe('The later moment; now when omitted'),
});

const ChunkDiffSchema = z.object({
  chunkId: z.string(),
  changes: z.record(z.string(), FieldChangeSchema),
  forgotten: z
    .literal(true)
    .optional()
    .describe('Present when free text of this chunk was forgotten: those values are null'),
});
export type ChunkDiff = z.infer<typeof ChunkDiffSchema>;

export const DiffAnnotationsOutputSchema = z.object({
  from: z.string(),
  to: z.string().nullable(),
  added: z.array(ChunkDiffSchema).describe('Chunks annotated (or related) at `to` but not at `from`'),
  changed: z.array(ChunkDiffSchema).describe('Chunks annotated at both moments whose fields differ'),
  removed: z.array(ChunkDiffSchema).describe('Chunks annotated at `from` but not at `to`'),
});
export type AnnotationDiff = z.infer<typeof DiffAnnotationsOutputSchema>;

type Snapshot = Map<string, { position: number; values: Record<string, unknown> }>;

const hasRelations = (relations: object) => Object.keys(relations).length > 0;

/** The chunks that carry annotations at this moment, with their values (relations included). */
const snapshot = (state: SessionState): Snapshot => {
  const taken: Snapshot = new Map();
  for (const chunk of state.chunks.values()) {
    if (chunk.annotated || hasRelations(chunk.relations)) {
      taken.set(chunk.chunkId, {
        position: chunk.position,
        values: { ...chunk.fields, relations: chunk.relations },
      });
    }
  }
  return taken;
};

/** Opens the free text of both snapshots in place, so that they compare by what a reader sees. */
const openSnapshots = async (snapshots: Snapshot[], keyring: Keyring): Promise<void> => {
  const entries = snapshots.flatMap((taken) => [...taken.values()]);
  const opener = await keyring.opener(
    protectedValuesOf(entries.map((e) => e.values as Partial<StoredAnnotationFields>)),
  );
  for (const { values } of entries) {
    for (const field of PROTECTED_FIELDS) values[field] = opener.open(values[field] as ProtectedText);
  }
};

const forgottenIn = (...values: (Record<string, unknown> | undefined)[]) =>
  values.some((v) => v !== undefined && PROTECTED_FIELDS.some((field) => v[field] === null));

const EMPTY: Record<string, unknown> = { ...emptyAnnotation(), relations: {} };

const changesBetween = (before: Record<string, unknown>, after: Record<string, unknown>) => {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of [...ANNOTATION_FIELDS, 'relations']) {
    if (!sameValue(before[field], after[field])) changes[field] = { from: before[field], to: after[field] };
  }
  return changes;
};

const isEarlier = (a: AsOf, b: AsOf): boolean =>
  'position' in a && 'position' in b
    ? a.position <= b.position
    : 'timestamp' in a && 'timestamp' in b
      ? Date.parse(a.timestamp) <= Date.parse(b.timestamp)
      : true;

/** What changed between two moments of a session, chunk by chunk and field by field. */
export const diffAnnotations = async (
  store: EventStore,
  keyring: Keyring,
  rawInput: unknown,
): Promise<AnnotationDiff> => {
  const input = parseInput(DiffAnnotationsInputSchema, rawInput);
  const from = parseAsOf(input.from);
  const to = input.to === undefined ? undefined : parseAsOf(input.to);
  const events = await readSessionEvents(store, input.sessionId);
  if (events.length === 0) throw new SessionNotFoundError(input.sessionId);
  // One pass: fold to the earlier moment, take a snapshot, fold on to the later one.
  const forwards = to === undefined || isEarlier(from, to);
  const first = foldSessionUntil(events, forwards ? from : to);
  const early = snapshot(first.state);
  const late = snapshot(foldSessionUntil(events, forwards ? to : from, first.state, first.next).state);
  const [before, after] = forwards ? [early, late] : [late, early];
  await openSnapshots([before, after], keyring);
  const diff = (chunkId: string, changes: ChunkDiff['changes']): ChunkDiff => ({
    chunkId,
    changes,
    ...(forgottenIn(before.get(chunkId)?.values, after.get(chunkId)?.values)
      ? { forgotten: true as const }
      : {}),
  });

  const added: ChunkDiff[] = [];
  const changed: ChunkDiff[] = [];
  const removed: ChunkDiff[] = [];
  const byPosition = (a: ChunkDiff, b: ChunkDiff) =>
    (after.get(a.chunkId) ?? before.get(a.chunkId))!.position -
    (after.get(b.chunkId) ?? before.get(b.chunkId))!.position;
  for (const [chunkId, now] of after) {
    const then = before.get(chunkId);
    const changes = changesBetween(then?.values ?? EMPTY, now.values);
    if (!then) added.push(diff(chunkId, changes));
    else if (Object.keys(changes).length > 0) changed.push(diff(chunkId, changes));
  }
  for (const [chunkId, then] of before) {
    if (!after.has(chunkId)) removed.push(diff(chunkId, changesBetween(then.values, EMPTY)));
  }
  return {
    from: input.from,
    to: input.to ?? null,
    added: added.sort(byPosition),
    changed: changed.sort(byPosition),
    removed: removed.sort(byPosition),
  };
};

const changesText = (changes: Record<string, { from: unknown; to: unknown }> | undefined) =>
  Object.entries(changes ?? {})
    .map(([field, { from, to }]) => `${field}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}`)
    .join('; ');

export const diffAnnotationsSurfaces = {
  name: 'annotations.diff',
  rest: {
    method: 'GET',
    path: '/annotations/sessions/{id}/diff',
    summary: 'Chunks of a session whose annotations changed between two moments',
    params: { id: 'sessionId' },
    query: ['from', 'to'],
    errorFormat: 'tools',
  },
  cli: {
    command: ['annotations', 'diff'],
    description: 'chunks whose annotations were added, changed or removed between two moments',
    arguments: [{ name: 'sessionId', field: 'sessionId' }],
    options: [
      { flags: '--from <moment>', field: 'from', required: true, description: 'the earlier moment: a position or an ISO timestamp' },
      { flags: '--to <moment>', field: 'to', description: 'the later moment (default: now)' },
    ],
    print: {
      line: (diff: AnnotationDiff) => {
        const lines = [
          ...diff.added.map((d) => `+ ${d.chunkId}  ${changesText(d.changes)}`),
          ...diff.changed.map((d) => `~ ${d.chunkId}  ${changesText(d.changes)}`),
          ...diff.removed.map((d) => `- ${d.chunkId}  ${changesText(d.changes)}`),
        ];
        return lines.length ? lines.join('\n') : 'No changes.';
      },
    },
  },
} as const satisfies OperationSurfaces;

export const diffAnnotationsOperation = (store: EventStore, keyring: Keyring) =>
  defineOperation({
    ...diffAnnotationsSurfaces,
    title: 'Compare two moments of a session',
    description:
      'Lists the chunks whose annotations were added, changed or removed between two moments (positions from ' +
      'annotations.history or ISO timestamps), each with the changed fields before and after.',
    toolset: 'annotations',
    writes: false,
    input: DiffAnnotationsInputSchema,
    output: DiffAnnotationsOutputSchema,
    run: (input) => diffAnnotations(store, keyring, input),
  });

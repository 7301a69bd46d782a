import type { StoredEvent } from '../domain/events.js';
import { START, type Position } from '../domain/position.js';
import { ConcurrencyError, IllegalStateError } from '../errors.js';
import type { ContentStore } from '../ports/contentStore.js';
import type { EventStore, ExpectedRevision, NewEvent } from '../ports/eventStore.js';

export interface MigrationProgress {
  /** Events read from the source so far. */
  read: number;
  /** Events the destination now holds, appended by this run or found there from an earlier one. */
  copied: number;
  /** Position in the source of the last event copied. */
  position: Position;
}

export interface MigrateOptions {
  /** Events read from the source per page. */
  pageSize?: number;
  /** Content stores to copy the texts events refer to, before the events themselves. */
  content?: { from: ContentStore; to: ContentStore };
  onProgress?: (progress: MigrationProgress) => void;
}

const asNewEvent = (event: StoredEvent): NewEvent =>
  ({
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: event.data,
    metadata: event.metadata,
  }) as NewEvent;

/** Runs of consecutive events of one stream, in `$all` order: each becomes one append. */
const streamRuns = (events: readonly StoredEvent[]): StoredEvent[][] => {
  const runs: StoredEvent[][] = [];
  for (const event of events) {
    const last = runs.at(-1);
    if (last?.[0]?.streamId === event.streamId) last.push(event);
    else runs.push([event]);
  }
  return runs;
};

/** Content hashes an event refers to: document bodies and chunk texts. */
const contentHashes = (event: StoredEvent): string[] =>
  event.type === 'DocumentIngested' ? [event.data.bodyHash, ...event.data.chunks.map((c) => c.textHash)] : [];

/**
 * Copies the texts a page of events refers to, so that no read model in the destination ever sees
 * an event whose content is missing. A text the source has forgotten stays forgotten.
 */
const copyContent = async (
  { from, to }: NonNullable<MigrateOptions['content']>,
  events: readonly StoredEvent[],
) => {
  const hashes = [...new Set(events.flatMap(contentHashes))];
  const present = await to.get(hashes);
  const missing = hashes.filter((hash) => !present.has(hash));
  if (missing.length === 0) return;
  const texts = await from.get(missing);
  const stored = await to.put([...texts.values()]);
  const unexpected = stored.filter((hash) => !texts.has(hash));
  if (unexpected.length > 0)
    throw new IllegalStateError(`Content ${unexpected[0]} changed its hash on the way`);
};

const expectedBefore = (revision: bigint): ExpectedRevision =>
  revision === 0n ? 'no_stream' : revision - 1n;

/**
 * Appends a run of a stream's events at the revisions they had in the source. Whatever the
 * destination already holds of it (from an earlier, perhaps interrupted, run) is recognised by event
 * id and skipped; a destination stream that holds other events there is a conflict.
 */
const copyRun = async (to: EventStore, run: readonly StoredEvent[]): Promise<number> => {
  const streamId = run[0]!.streamId;
  let pending = run;
  for (;;) {
    const head = pending[0]!;
    try {
      const result = await to.append(streamId, pending.map(asNewEvent), expectedBefore(head.revision));
      if (result.nextExpectedRevision >= pending.at(-1)!.revision) return run.length;
      // The first events were there already (an idempotent answer): append what follows them.
      pending = pending.filter((e) => e.revision > result.nextExpectedRevision);
      continue;
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
    }
    const present = await to.readStream(streamId, { fromRevision: head.revision, maxCount: pending.length });
    const differing = present.findIndex((e, i) => e.metadata.eventId !== pending[i]?.metadata.eventId);
    if (differing !== -1 || present.length === 0) {
      const at = head.revision + BigInt(differing === -1 ? 0 : differing);
      throw new IllegalStateError(
        `Stream '${streamId}' in the destination differs from the source at revision ${at}`,
        {
          streamId,
        },
      );
    }
    if (present.length === pending.length) return run.length;
    pending = pending.slice(present.length);
  }
};

/**
 * Copies every event of `from` into `to` through the port, in `$all` order: each stream keeps its
 * revisions, and each event its id, metadata and payload (the destination records its own time and
 * position); with `content`, the texts the events refer to go first. Re-running it copies only what is missing, so an interrupted migration is resumed by
 * running it again.
 */
export const migrateEvents = async (
  from: EventStore,
  to: EventStore,
  { pageSize = 1_000, content, onProgress }: MigrateOptions = {},
): Promise<MigrationProgress> => {
  const progress: MigrationProgress = { read: 0, copied: 0, position: START };
  for (;;) {
    const page = await from.readAll({ from: progress.position, maxCount: pageSize });
    if (page.length === 0) return progress;
    if (content) await copyContent(content, page);
    for (const run of streamRuns(page)) {
      progress.copied += await copyRun(to, run);
      progress.read += run.length;
      progress.position = run.at(-1)!.position;
    }
    onProgress?.({ ...progress });
  }
};

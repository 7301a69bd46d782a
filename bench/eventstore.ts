import { cpus, loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { createPostgresEventStore } from '../infra/eventstore/postgresEventStore.js';
import { connectPostgres, openPglite, type Database } from '../infra/postgres/database.js';
import { openPgliteThread } from '../infra/postgres/threadedPglite.js';
import { START } from '../src/domain/position.js';
import { postgresDocumentProjection } from '../infra/postgres/documentReadModels.js';
import { streamSummaries } from '../projections/ledger/streamSummaries.js';
import { createProjectionRunner } from '../src/engine/projectionRunner.js';
import { silentLogger } from '../src/ports/logger.js';
import type { EventStore } from '../src/ports/eventStore.js';
import { newEvents } from '../test/support/events.js';
import { createTestDatabase } from '../test/support/postgres.js';
import { scratchDir } from './scratchDir.js';

/**
 * Event store throughput on each engine: single-event appends (1 and 8 writers on distinct
 * streams), 10-event appends, `$all` reads in batches of 1000 over a store of 50,000+ events, and a
 * projection catching up on all of them. Each is timed in several rounds, which take turns between
 * the engines: a figure is their median, printed with the slowest and fastest round, as one round
 * can be slowed by a pause of the garbage collector or of the host.
 */

interface Target {
  name: string;
  open: () => Promise<{ db: Database; dispose: () => Promise<void> }>;
}

interface Measure {
  label: string;
  /** Returns a rate per second. */
  measure: (store: EventStore, db: Database) => Promise<number>;
}

const ROUNDS = 7;
const SINGLE_APPENDS = 2_000;
const BATCH_APPENDS = 2_000;
const BATCH_SIZE = 10;
const READ_BATCH = 1_000;
/**
 * Untimed appends first, for this long, so that the figures are those of a running server and not
 * of cold code: V8 compiles PostgreSQL's WebAssembly (and our code) optimised only once it has run
 * a while, and appends keep getting faster over their first few seconds.
 */
const WARM_UP_MS = 3_000;

/**
 * A full collection, just before a round's clock starts (`npm run bench` runs node with
 * --expose-gc): the garbage of its setup, such as the 20,000 events made up front, is then not
 * collected on its time. What a round itself leaves behind still is.
 */
const collectSetupGarbage = (): void => (globalThis as { gc?: () => void }).gc?.();

const perSecond = (count: number, startedAt: number): number =>
  count / ((performance.now() - startedAt) / 1000);

/** For each of `writers`, a stream of its own and `appends` batches of `size` events for it. */
const planAppends = (writers: number, appends: number, size: number) =>
  Array.from({ length: writers }, () => ({
    stream: `job-${randomUUID()}`,
    batches: Array.from({ length: appends }, () => newEvents(size, { project: 'bench' })),
  }));

/** Each writer appends its batches in order, each after the last one answered; writers run concurrently. */
const runPlans = (store: EventStore, plans: ReturnType<typeof planAppends>) =>
  Promise.all(
    plans.map(async ({ stream, batches }) => {
      let revision = -1n;
      for (const batch of batches) {
        revision = (await store.append(stream, batch, revision < 0n ? 'no_stream' : revision))
          .nextExpectedRevision;
      }
    }),
  );

/** `writers` concurrent loops, each appending `appends` batches of `size` events to its own stream. */
const appendConcurrently = async (store: EventStore, writers: number, appends: number, size: number) => {
  const plans = planAppends(writers, appends, size);
  collectSetupGarbage();
  const startedAt = performance.now();
  await runPlans(store, plans);
  return perSecond(writers * appends * size, startedAt);
};

/** Reads of a few thousand events would time mostly cold code: reads run over at least this many. */
const READ_EVENTS = 50_000;

/** Tops `$all` up to READ_EVENTS with untimed 100-event appends. */
const fillForReading = async (store: EventStore) => {
  const present = await store.countAll({ limit: READ_EVENTS });
  const stream = `job-${randomUUID()}`;
  let revision = -1n;
  for (let missing = READ_EVENTS - present; missing > 0; missing -= 100) {
    const batch = newEvents(Math.min(100, missing), { project: 'bench' });
    revision = (await store.append(stream, batch, revision < 0n ? 'no_stream' : revision)).nextExpectedRevision;
  }
};

const readAllInBatches = async (store: EventStore): Promise<number> => {
  await fillForReading(store);
  return readEverything(store);
};

/** One pass over `$all` in batches; answers events per second. */
const readEverything = async (store: EventStore): Promise<number> => {
  collectSetupGarbage();
  const startedAt = performance.now();
  let from = START;
  let read = 0;
  for (;;) {
    const batch = await store.readAll({ from, maxCount: READ_BATCH });
    const last = batch.at(-1);
    if (!last) break;
    read += batch.length;
    from = last.position;
  }
  return perSecond(read, startedAt);
};

const MEASURES: Measure[] = [
  { label: 'appends/s, 1 writer', measure: (store) => appendConcurrently(store, 1, SINGLE_APPENDS, 1) },
  { label: 'appends/s, 8 writers', measure: (store) => appendConcurrently(store, 8, SINGLE_APPENDS / 8, 1) },
  {
    label: `events/s, ${BATCH_SIZE}-event appends, 8 writers`,
    measure: (store) => appendConcurrently(store, 8, BATCH_APPENDS / 8, BATCH_SIZE),
  },
  {
    label: `$all events/s (${READ_EVENTS / 1000}k+ events, batches of ${READ_BATCH})`,
    measure: (store) => readAllInBatches(store),
  },
  ...projectionCatchUpMeasures(),
];

/**
 * Slot for projection catch-up figures (events/s a projection folds from position 0).
 * Return measures here; they run after the others, on the events those wrote.
 */
function projectionCatchUpMeasures(): Measure[] {
  let projections = 0;
  return [
    {
      label: 'projection catch-up events/s',
      measure: async (store, db) => {
        // A fresh projection of every stream, folded from the first event into Postgres tables.
        const projection = await postgresDocumentProjection(db, { ...streamSummaries, name: `bench_${++projections}` });
        const runner = createProjectionRunner(store, [projection], { logger: silentLogger, batchSize: 1_000 });
        const head = await store.headPosition();
        const total = await store.countAll();
        collectSetupGarbage();
        const startedAt = performance.now();
        await runner.start();
        await runner.waitFor(head, { timeoutMs: 600_000 });
        const rate = perSecond(total, startedAt);
        await runner.stop();
        return rate;
      },
    },
  ];
}

const serverUrl = (): string | undefined =>
  process.env.CTX_BENCH_PG_URL || process.env.CTX_TEST_PG_URL || undefined;

const TARGETS: Target[] = [
  {
    name: 'PGlite (memory)',
    open: async () => {
      const db = await openPglite();
      return { db, dispose: () => db.close() };
    },
  },
  {
    name: 'PGlite (data dir)',
    open: async () => {
      const dir = scratchDir('ctx-bench-eventstore-');
      const db = await openPglite(dir);
      return {
        db,
        dispose: () => db.close(),
      };
    },
  },
  {
    name: 'PGlite (data dir, own thread)',
    open: async () => {
      const dir = scratchDir('ctx-bench-eventstore-');
      const db = await openPgliteThread(dir);
      return {
        db,
        dispose: () => db.close(),
      };
    },
  },
  {
    name: 'PostgreSQL server',
    open: async () => {
      const database = await createTestDatabase(serverUrl()!, 'ctx_bench');
      const db = connectPostgres(database.url, { max: 10 });
      return {
        db,
        dispose: async () => {
          await db.close();
          await database.drop();
        },
      };
    },
  },
];

/** The median of a measure's rounds, with the slowest and the fastest. */
interface Figure {
  median: number;
  min: number;
  max: number;
}

const figureOf = (rates: number[]): Figure => {
  const sorted = [...rates].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)! };
};

const formatRate = (rate: number): string => Math.round(rate).toLocaleString('en-US');
const formatFigure = ({ median, min, max }: Figure): string =>
  `${formatRate(median)} (${formatRate(min)}–${formatRate(max)})`;

const printTable = (rows: { target: string; figures: (string | Figure)[] }[]): void => {
  const header = ['engine', ...MEASURES.map((m) => m.label)];
  const cells = [
    header,
    ...rows.map((r) => [r.target, ...r.figures.map((f) => (typeof f === 'string' ? f : formatFigure(f)))]),
  ];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of cells.slice(1)) console.log(line(row));
};

interface Engine {
  name: string;
  db: Database;
  store: EventStore;
  dispose: () => Promise<void>;
  /** By measure, the rate of each round. */
  rates: number[][];
}

const warmUp = async (store: EventStore): Promise<void> => {
  for (const startedAt = performance.now(); performance.now() - startedAt < WARM_UP_MS; ) {
    await runPlans(store, planAppends(2, 100, 1));
    await runPlans(store, planAppends(8, 5, BATCH_SIZE));
  }
};

export async function run(): Promise<void> {
  const engines: Engine[] = [];
  try {
    for (const target of TARGETS) {
      if (target.name === 'PostgreSQL server' && !serverUrl()) {
        console.log('PostgreSQL server: skipped (set CTX_BENCH_PG_URL or CTX_TEST_PG_URL to include it)');
        continue;
      }
      const { db, dispose } = await target.open();
      const store = await createPostgresEventStore(db).catch(async (error: unknown) => {
        await dispose();
        throw error;
      });
      engines.push({ name: target.name, db, dispose, store, rates: MEASURES.map(() => []) });
    }
    for (const engine of engines) await warmUp(engine.store);
    // A measure's rounds take turns between the engines: a slow spell of the host then slows a
    // round of each, not every round of one.
    for (const [m, { label, measure }] of MEASURES.entries()) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const { store, db, rates } of engines) rates[m]!.push(await measure(store, db));
      }
      console.log(`${label}: done`);
    }
    printTable(
      TARGETS.map(({ name }) => {
        const engine = engines.find((e) => e.name === name);
        return { target: name, figures: engine ? engine.rates.map(figureOf) : MEASURES.map(() => 'skipped') };
      }),
    );
  } finally {
    for (const { store, dispose } of engines) {
      await store.close();
      await dispose();
    }
  }
  console.log(`median of ${ROUNDS} rounds (slowest–fastest)`);
  // Figures from a busy machine understate; say how busy it was.
  const [oneMinute = 0] = loadavg();
  console.log(`load average ${oneMinute.toFixed(2)} on ${cpus().length} CPUs`);
}

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ProjectionRunner, ProjectionStatus } from '../engine/projectionRunner.js';

/** What the read side reports at each scrape; set once the ledger has assembled it. */
export interface ObservedLedger {
  projections: ProjectionRunner;
  /** Indexing jobs per status, or null when this deployment runs no jobs. */
  jobsByStatus: (() => Promise<ReadonlyMap<string, number>>) | null;
  embedding: () => { queuedTexts: number; callsInFlight: number; vectorsMade: number };
}

export interface LedgerMetrics {
  readonly contentType: string;
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  readonly eventsAppended: Counter<'type'>;
  observe(ledger: ObservedLedger): void;
  /** Process metrics (CPU, memory, event loop); for a serving process only. */
  collectProcessMetrics(): void;
  /** The Prometheus text exposition, with the read side's gauges read now. */
  scrape(): Promise<string>;
}

/** A projection's state for alerting: `error` while its last batch failed, whatever it is doing. */
const PROJECTION_STATES = ['running', 'stopped', 'rebuilding', 'error'] as const;
const stateOf = (status: ProjectionStatus) => (status.lastError ? 'error' : status.state);

/** One registry per ledger: several ledgers can run in one process (tests do). */
export const createLedgerMetrics = (): LedgerMetrics => {
  const registry = new Registry();
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });

  const httpRequestDuration = new Histogram({
    name: 'ctx_http_request_duration_seconds',
    help: 'HTTP request latency by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const eventsAppended = new Counter({
    name: 'ctx_events_appended_total',
    help: 'Events appended to the ledger by this process, by event type',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const lagEvents = gauge('ctx_projection_lag_events', 'Events in $all after the projection checkpoint', ['projection']);
  const lagSeconds = gauge(
    'ctx_projection_lag_seconds',
    'Seconds between the oldest event a projection has not applied and the head of $all',
    ['projection'],
  );
  const eventsPerSecond = gauge('ctx_projection_events_per_second', 'Events a projection applied per second lately', [
    'projection',
  ]);
  const state = gauge('ctx_projection_state', 'The state of each projection: 1 for the current one', [
    'projection',
    'state',
  ]);
  // A counter whose value is read from the quarantine records at each scrape: it survives restarts.
  const quarantined = new Counter({
    name: 'ctx_projection_quarantined_events_total',
    help: 'Events a projection could not apply, quarantined and gone past',
    labelNames: ['projection'] as const,
    registers: [registry],
  });
  const rebuildPercent = gauge('ctx_projection_rebuild_percent', 'Progress of a running rebuild', ['projection']);
  const jobs = gauge('ctx_jobs', 'Indexing jobs by status', ['status']);
  const embeddingQueue = gauge('ctx_embedding_queue_texts', 'Texts handed to the embedding model and not embedded yet', []);
  const embeddingCalls = gauge('ctx_embedding_calls_in_flight', 'Calls to the embedding model running now', []);
  // Read from the process's count at each scrape, as each call to the model returns: its rate is the embedding speed.
  const vectorsMade = new Counter({
    name: 'ctx_embedding_vectors_total',
    help: 'Vectors the embedding models of this process have made since it started',
    registers: [registry],
  });

  let observed: ObservedLedger | null = null;

  const refresh = async ({ projections, jobsByStatus, embedding }: ObservedLedger) => {
    const [statuses, jobCounts] = await Promise.all([projections.status(), jobsByStatus?.() ?? null]);
    for (const gaugeByProjection of [lagEvents, lagSeconds, eventsPerSecond, state, rebuildPercent])
      gaugeByProjection.reset();
    quarantined.reset();
    for (const status of statuses) {
      const projection = status.name;
      lagEvents.set({ projection }, status.lagEvents);
      lagSeconds.set({ projection }, status.lagSeconds);
      eventsPerSecond.set({ projection }, status.eventsPerSecond);
      for (const name of PROJECTION_STATES) state.set({ projection, state: name }, stateOf(status) === name ? 1 : 0);
      if (status.rebuild) rebuildPercent.set({ projection }, status.rebuild.percent);
      quarantined.inc({ projection }, status.quarantined.length);
    }
    jobs.reset();
    for (const [status, count] of jobCounts ?? []) jobs.set({ status }, count);
    const activity = embedding();
    embeddingQueue.set(activity.queuedTexts);
    embeddingCalls.set(activity.callsInFlight);
    vectorsMade.reset();
    vectorsMade.inc(activity.vectorsMade);
  };

  let processMetrics = false;
  return {
    contentType: registry.contentType,
    httpRequestDuration,
    eventsAppended,
    observe: (ledger) => {
      observed = ledger;
    },
    collectProcessMetrics: () => {
      if (processMetrics) return;
      processMetrics = true;
      collectDefaultMetrics({ register: registry });
    },
    scrape: async () => {
      if (observed) await refresh(observed);
      return registry.metrics();
    },
  };
};

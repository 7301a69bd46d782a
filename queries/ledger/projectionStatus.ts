import { z } from 'zod';
import type { ProjectionRunner, ProjectionStatus } from '../../src/engine/projectionRunner.js';
import { formatDuration } from '../../src/engine/rebuildText.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';

const timestamp = z.iso.datetime({ offset: true });

/** A read model's status as every surface shows it (MCP, `/tools`, `GET /api/v1/projections`, `ctx projections status --json`). */
export const ProjectionStatusSchema = z.object({
  name: z.string(),
  version: z.number().int().describe("The read model's version in the running code"),
  built_version: z
    .number()
    .int()
    .nullable()
    .describe('The version that built the copy being served: below `version` until a rebuild swaps in; null before any'),
  state: z.enum(['running', 'stopped', 'rebuilding']),
  checkpoint: z.string().describe('Position of the last event applied'),
  head: z.string().describe('Position of the last event in $all'),
  lag_events: z.number().int().nonnegative(),
  lag_seconds: z.number().nonnegative(),
  events_per_second: z.number().nonnegative(),
  last_error: z.object({ message: z.string(), at: timestamp }).nullable(),
  rebuild: z
    .object({
      processed_events: z.number().int().nonnegative(),
      total_events: z.number().int().nonnegative(),
      percent: z.number().min(0).max(100),
      eta_seconds: z.number().nonnegative().nullable(),
      started_at: timestamp,
    })
    .nullable(),
  quarantined: z
    .array(
      z.object({
        position: z.string(),
        event_type: z.string(),
        stream_id: z.string(),
        error: z.string(),
        quarantined_at: timestamp,
      }),
    )
    .describe('Events the read model cannot apply and went on past, oldest first'),
});
export type ProjectionStatusView = z.infer<typeof ProjectionStatusSchema>;

export const ProjectionStatusOutputSchema = z.object({ projections: z.array(ProjectionStatusSchema) });
export type ProjectionStatusOutput = z.infer<typeof ProjectionStatusOutputSchema>;

export const projectionStatusView = (s: ProjectionStatus): ProjectionStatusView => ({
  name: s.name,
  version: s.version,
  built_version: s.builtVersion,
  state: s.state,
  checkpoint: s.checkpoint,
  head: s.head,
  lag_events: s.lagEvents,
  lag_seconds: s.lagSeconds,
  events_per_second: s.eventsPerSecond,
  last_error: s.lastError,
  rebuild: s.rebuild && {
    processed_events: s.rebuild.processedEvents,
    total_events: s.rebuild.totalEvents,
    percent: s.rebuild.percent,
    eta_seconds: s.rebuild.etaSeconds,
    started_at: s.rebuild.startedAt,
  },
  quarantined: s.quarantined.map((q) => ({
    position: q.position,
    event_type: q.eventType,
    stream_id: q.streamId,
    error: q.error,
    quarantined_at: q.quarantinedAt,
  })),
});

/** Each quarantined event under the table: where, what, and why it could not be applied. */
const quarantinedLines = (status: readonly ProjectionStatusView[]): string | undefined => {
  const lines = status.flatMap((s) =>
    s.quarantined.map((q) => `  ${s.name} at ${q.position}: ${q.event_type} in ${q.stream_id}: ${q.error}`),
  );
  return lines.length ? `\nQuarantined events (skipped; see the README):\n${lines.join('\n')}` : undefined;
};

export const projectionStatusSurfaces = {
  name: 'projections.status',
  toolset: 'admin',
  scope: 'admin',
  writes: false,
  input: z.object({}).strict(),
  output: ProjectionStatusOutputSchema,
  rest: {
    method: 'GET',
    path: '/projections',
    summary: 'Read models: checkpoint, lag, throughput, last error, rebuild progress and quarantined events',
  },
  cli: {
    command: ['projections', 'status'],
    description: 'checkpoint, lag and throughput of every projection',
    shown: ({ projections }: ProjectionStatusOutput) => projections,
    print: {
      table: {
        columns: {
          name: '{name}',
          version: (s: ProjectionStatusView) =>
            s.built_version === null || s.built_version === s.version
              ? String(s.version)
              : `${s.built_version} (rebuild for ${s.version})`,
          state: '{state}',
          'lag (events)': '{lag_events}',
          'lag (s)': (s: ProjectionStatusView) => s.lag_seconds.toFixed(1),
          'events/s': '{events_per_second}',
          rebuild: ({ rebuild }: ProjectionStatusView) =>
            rebuild
              ? `${rebuild.percent.toFixed(1)}%, ${rebuild.eta_seconds === null ? 'estimating' : `${formatDuration(rebuild.eta_seconds)} left`}`
              : '',
          quarantined: (s: ProjectionStatusView) => String(s.quarantined.length),
          'last error': '{last_error.message}',
        },
        empty: 'No projections.',
        more: quarantinedLines,
      },
    },
  },
} as const satisfies RouteSurfaces;

/** Checkpoint, lag, throughput, last error and rebuild progress of every read model. */
export const projectionStatusOperation = (projections: () => ProjectionRunner) =>
  defineOperation({
    ...projectionStatusSurfaces,
    operatorOnly: true,
    title: 'Projection status',
    description: 'Every read model with its checkpoint, lag behind the ledger, throughput, last error and rebuild progress.',
    run: async () => ({ projections: (await projections().status()).map(projectionStatusView) }),
  });

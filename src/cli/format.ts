import type { ReadHistoryOutput } from '../../queries/readHistory.js';
import type { ProjectionStatus, RebuildProgress } from '../engine/projectionRunner.js';

const table = (rows: readonly (readonly string[])[]): string => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n');
};

export const formatHistory = (page: ReadHistoryOutput): string => {
  if (page.events.length === 0) return 'No events.';
  const rows = page.events.map((e) => [e.recordedAt, e.streamId, `#${e.revision}`, e.type, `${e.actor.subject} (${e.actor.via})`]);
  const more = page.nextCursor ? `\nMore: --cursor ${page.nextCursor}` : '';
  return table([['RECORDED', 'STREAM', 'REV', 'TYPE', 'ACTOR'], ...rows]) + more;
};

/** `45s`, `3m 05s`, `2h 07m`. */
export const formatDuration = (seconds: number): string => {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
};

const eta = (p: RebuildProgress) => (p.etaSeconds === null ? 'estimating' : `${formatDuration(p.etaSeconds)} left`);

/** `1200/5000 events (24.0%), 12s left` */
export const formatRebuildProgress = (p: RebuildProgress): string =>
  `${p.processedEvents}/${p.totalEvents} events (${p.percent.toFixed(1)}%), ${eta(p)}`;

/** The table of projections, then each quarantined event: where, what, and why it could not be applied. */
export const formatProjectionStatus = (status: readonly ProjectionStatus[]): string => {
  const overview = table([
    ['NAME', 'VERSION', 'STATE', 'LAG (events)', 'LAG (s)', 'EVENTS/S', 'REBUILD', 'QUARANTINED', 'LAST ERROR'],
    ...status.map((s) => [
      s.name,
      String(s.version),
      s.state,
      String(s.lagEvents),
      s.lagSeconds.toFixed(1),
      String(s.eventsPerSecond),
      s.rebuild ? `${s.rebuild.percent.toFixed(1)}%, ${eta(s.rebuild)}` : '',
      String(s.quarantined.length),
      s.lastError?.message ?? '',
    ]),
  ]);
  const quarantined = status.flatMap((s) =>
    s.quarantined.map((q) => `  ${s.name} at ${q.position}: ${q.eventType} in ${q.streamId}: ${q.error}`),
  );
  return quarantined.length ? `${overview}\n\nQuarantined events (skipped; see the README):\n${quarantined.join('\n')}` : overview;
};

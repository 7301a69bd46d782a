import type { ReadHistoryOutput } from '../../queries/readHistory.js';
import type { ProjectionStatusView } from '../../queries/projectionStatus.js';
import type { RebuildProgress } from '../engine/projectionRunner.js';

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null | undefined;
}

/** Rows under upper-case headers, columns two spaces apart; `empty` when there are no rows. */
export const table = <T>(columns: readonly Column<T>[], rows: readonly T[], empty = 'Nothing to show.'): string => {
  if (rows.length === 0) return empty;
  const cells = [
    columns.map((c) => c.header.toUpperCase()),
    ...rows.map((row) => columns.map((c) => String(c.value(row) ?? ''))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
};

/** `key: value` lines, keys aligned; null and undefined values left out. */
export const fields = (entries: Readonly<Record<string, unknown>>): string => {
  const shown = Object.entries(entries).filter(([, v]) => v !== null && v !== undefined);
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown
    .map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean)}`)
    .join('\n');
};

const nextPage = (cursor: string | null | undefined) => (cursor ? `\nMore: --cursor ${cursor}` : '');

export const formatHistory = (page: ReadHistoryOutput): string =>
  table(
    [
      { header: 'position', value: (e) => e.position },
      { header: 'recorded', value: (e) => e.recordedAt },
      { header: 'stream', value: (e) => e.streamId },
      { header: 'rev', value: (e) => `#${e.revision}` },
      { header: 'type', value: (e) => e.type },
      { header: 'actor', value: (e) => `${e.actor.subject} (${e.actor.via})` },
    ],
    page.events,
    'No events.',
  ) + nextPage(page.nextCursor);

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
export const formatProjectionStatus = (status: readonly ProjectionStatusView[]): string => {
  const overview = table(
    [
      { header: 'name', value: (s) => s.name },
      { header: 'version', value: (s) => s.version },
      { header: 'state', value: (s) => s.state },
      { header: 'lag (events)', value: (s) => s.lag_events },
      { header: 'lag (s)', value: (s) => s.lag_seconds.toFixed(1) },
      { header: 'events/s', value: (s) => s.events_per_second },
      {
        header: 'rebuild',
        value: (s) =>
          s.rebuild
            ? `${s.rebuild.percent.toFixed(1)}%, ${s.rebuild.eta_seconds === null ? 'estimating' : `${formatDuration(s.rebuild.eta_seconds)} left`}`
            : '',
      },
      { header: 'quarantined', value: (s) => s.quarantined.length },
      { header: 'last error', value: (s) => s.last_error?.message },
    ],
    status,
    'No projections.',
  );
  const quarantined = status.flatMap((s) =>
    s.quarantined.map((q) => `  ${s.name} at ${q.position}: ${q.event_type} in ${q.stream_id}: ${q.error}`),
  );
  if (!quarantined.length) return overview;
  return `${overview}\n\nQuarantined events (skipped; see the README):\n${quarantined.join('\n')}`;
};

import type { ReadHistoryOutput } from '../../queries/readHistory.js';
import type { ProjectionStatus } from '../engine/projectionRunner.js';

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

export const formatProjectionStatus = (status: readonly ProjectionStatus[]): string =>
  table([
    ['NAME', 'VERSION', 'STATE', 'LAG (events)', 'LAG (s)', 'EVENTS/S', 'LAST ERROR'],
    ...status.map((s) => [
      s.name,
      String(s.version),
      s.state,
      String(s.lagEvents),
      s.lagSeconds.toFixed(1),
      String(s.eventsPerSecond),
      s.lastError?.message ?? '',
    ]),
  ]);

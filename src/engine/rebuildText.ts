import type { RebuildProgress } from './projectionRunner.js';

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

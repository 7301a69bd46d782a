/**
 * Milliseconds on a clock that only goes forward, for the time a job's steps take: a wall clock set
 * back (a time sync) would hold its progress reports, or make its time left up.
 */
export const elapsedMs = (): number => performance.now();

/** Says when a progress event is due: every `intervalMs`, or every `everyFiles` files, whichever first. */
export const progressThrottle = (intervalMs: number, everyFiles: number, now: () => number = elapsedMs) => {
  let lastAt = now();
  let filesSince = 0;
  return {
    fileDone() {
      filesSince++;
    },
    due(): boolean {
      return filesSince >= everyFiles || now() - lastAt >= intervalMs;
    },
    reported() {
      lastAt = now();
      filesSince = 0;
    },
  };
};

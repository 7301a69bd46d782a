/** Says when a progress event is due: every `intervalMs`, or every `everyFiles` files, whichever first. */
export const progressThrottle = (intervalMs: number, everyFiles: number, now: () => number = Date.now) => {
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

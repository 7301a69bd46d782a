/**
 * One line of progress on stderr, rewritten in place on a terminal. Piped, it is silent, unless
 * `pipedEveryMs` asks for a line that often (long work whose log should show it moving).
 */
export const progressLine = ({ pipedEveryMs }: { pipedEveryMs?: number } = {}) => {
  const live = process.stderr.isTTY;
  let last = 0;
  return {
    update(text: string) {
      const now = Date.now();
      if (live ? now - last < 100 : pipedEveryMs === undefined || now - last < pipedEveryMs) return;
      last = now;
      process.stderr.write(live ? `\r\x1b[2K${text}` : `${text}\n`);
    },
    done() {
      if (live) process.stderr.write('\r\x1b[2K');
    },
  };
};

const duration = (seconds: number) =>
  seconds < 90 ? `${Math.ceil(seconds)} s` : seconds < 5400 ? `${Math.ceil(seconds / 60)} min` : `${(seconds / 3600).toFixed(1)} h`;

/** `, 850/s, 6 s left`: the rate so far, and the time the rest takes at that rate. */
export const rateAndEta = (done: number, total: number, startedMs: number): string => {
  const seconds = (Date.now() - startedMs) / 1000;
  if (done === 0 || seconds <= 0) return '';
  const rate = done / seconds;
  return `, ${rate.toFixed(0)}/s, ${duration(Math.max(0, total - done) / rate)} left`;
};

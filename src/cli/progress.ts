import type { CatchUpWait } from '../module.js';
import { forTerminal } from './terminalText.js';

/**
 * One line of progress on stderr, rewritten in place on a terminal. Piped, it is silent, unless
 * `pipedEveryMs` asks for a line that often (long work whose log should show it moving), but for
 * the first `note`.
 */
export const progressLine = ({ pipedEveryMs }: { pipedEveryMs?: number } = {}) => {
  const live = process.stderr.isTTY;
  let last = 0;
  let noted = false;
  const update = (progress: string) => {
    const text = forTerminal(progress);
    const now = Date.now();
    if (live ? now - last < 100 : pipedEveryMs === undefined || now - last < pipedEveryMs) return;
    last = now;
    process.stderr.write(live ? `\r\x1b[2K${text}` : `${text}\n`);
  };
  return {
    update,
    /** Progress that says why a command takes long: piped, its first one is written as a line of its own. */
    note(text: string) {
      if (live) return update(text);
      if (!noted) process.stderr.write(`${forTerminal(text)}\n`);
      noted = true;
    },
    done() {
      if (live) process.stderr.write('\r\x1b[2K');
    },
  };
};

const duration = (seconds: number) =>
  seconds < 90 ? `${Math.ceil(seconds)} s` : seconds < 5400 ? `${Math.ceil(seconds / 60)} min` : `${(seconds / 3600).toFixed(1)} h`;

/** `, 850/s, 6 s left`: the rate so far, and the time the rest takes at that rate (when the total is known). */
export const rateAndEta = (done: number, total: number | null, startedMs: number): string => {
  const seconds = (Date.now() - startedMs) / 1000;
  if (done === 0 || seconds <= 0) return '';
  const rate = done / seconds;
  return `, ${rate.toFixed(0)}/s${total === null ? '' : `, ${duration(Math.max(0, total - done) / rate)} left`}`;
};

/** What a command waiting for a read model says: for what, how much is left, and that stopping loses nothing. */
export const waitingText = ({ projection, events }: CatchUpWait) =>
  `waiting for the ${projection} index to apply ${events} more events ` +
  '(Ctrl-C is safe: nothing is lost, and it goes on from there next time)';

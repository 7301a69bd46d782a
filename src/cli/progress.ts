import type { CatchUpWait } from '../module.js';

/** One line of progress on stderr, rewritten in place on a terminal; silent when piped, but for the first `note`. */
export const progressLine = () => {
  const live = process.stderr.isTTY;
  let last = 0;
  let noted = false;
  const update = (text: string) => {
    const now = Date.now();
    if (!live || now - last < 100) return;
    last = now;
    process.stderr.write(`\r\x1b[2K${text}`);
  };
  return {
    update,
    /** Progress that says why a command takes long: piped, its first one is written as a line of its own. */
    note(text: string) {
      if (live) return update(text);
      if (!noted) process.stderr.write(`${text}\n`);
      noted = true;
    },
    done() {
      if (live) process.stderr.write('\r\x1b[2K');
    },
  };
};

/** What a command waiting for a read model says: for what, how much is left, and that stopping loses nothing. */
export const waitingText = ({ projection, events }: CatchUpWait) =>
  `waiting for the ${projection} index to apply ${events} more events ` +
  '(Ctrl-C is safe: nothing is lost, and it goes on from there next time)';

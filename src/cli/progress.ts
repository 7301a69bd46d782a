/** One line of progress on stderr, rewritten in place on a terminal; silent when piped. */
export const progressLine = () => {
  const live = process.stderr.isTTY;
  let last = 0;
  return {
    update(text: string) {
      const now = Date.now();
      if (!live || now - last < 100) return;
      last = now;
      process.stderr.write(`\r\x1b[2K${text}`);
    },
    done() {
      if (live) process.stderr.write('\r\x1b[2K');
    },
  };
};

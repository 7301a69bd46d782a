const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PollOptions {
  /** Without it, the test's own timeout bounds the wait. */
  timeoutMs?: number;
  /** What is awaited, for the message when the time is up. */
  what?: string;
  intervalMs?: number;
}

/** Reads until `done` holds of what was read (by default: until it is truthy), and answers that. */
export const until = async <T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean = Boolean,
  { timeoutMs, what = 'a condition', intervalMs = 50 }: PollOptions = {},
): Promise<T> => {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await sleep(intervalMs);
  }
};

/** Runs `check` (assertions) until it passes; the last failure is thrown once the time is up. */
export const eventually = async (
  check: () => void | Promise<void>,
  { timeoutMs = 5_000, intervalMs = 20 }: Omit<PollOptions, 'what'> = {},
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(intervalMs);
    }
  }
};

/** How often a wait checks whether its job was asked to stop. */
const STOP_POLL_MS = 100;

/**
 * Waits for `work`, but only until `checkStop` throws (a cancel or a shutdown): a remote service,
 * an embedder or a database that keeps a request waiting must not hold a stop back. The work left
 * behind settles on its own; its answer, or its failure, is dropped.
 */
export const untilStopped = async <T>(work: Promise<T>, checkStop: () => void): Promise<T> => {
  let poll: NodeJS.Timeout | undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    poll = setInterval(() => {
      try {
        checkStop();
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }, STOP_POLL_MS);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, stopped]);
  } finally {
    clearInterval(poll);
  }
};

/**
 * Group commit: items submitted while `concurrency` batches are in flight wait, and go together in
 * the next batch, up to `maxBytes` of them (a larger item still goes, alone). A lone item is sent
 * as soon as the code running now has done (a microtask), so grouping adds no latency, and items
 * submitted together (a batch command's appends) go together; under load, many items share one
 * round trip and commit.
 */
export interface GroupCommitOptions<I> {
  /** Batches in flight at once. */
  concurrency: number;
  /** Bytes of items one batch takes. */
  maxBytes: number;
  sizeOf: (item: I) => number;
}

/**
 * `run` answers one settled result per item, in order: a batch never fails as a whole, so that
 * one item's error is not another's.
 */
export const groupCommit = <I, O>(
  run: (items: I[]) => Promise<PromiseSettledResult<O>[]>,
  { concurrency, maxBytes, sizeOf }: GroupCommitOptions<I>,
): ((item: I) => Promise<O>) => {
  const waiting: { item: I; resolve: (out: O) => void; reject: (error: unknown) => void }[] = [];
  let inFlight = 0;

  const takeBatch = () => {
    let bytes = 0;
    let count = 0;
    while (count < waiting.length) {
      bytes += sizeOf(waiting[count]!.item);
      if (count > 0 && bytes > maxBytes) break;
      count++;
    }
    return waiting.splice(0, count);
  };

  const flush = async () => {
    inFlight++;
    // The other items submitted in this turn, a microtask or two behind the first, join it (and a
    // batch in flight beside this one may have taken them all).
    await Promise.resolve();
    while (waiting.length > 0) {
      const batch = takeBatch();
      let results: PromiseSettledResult<O>[];
      try {
        results = await run(batch.map((w) => w.item));
      } catch (error) {
        results = batch.map(() => ({ status: 'rejected', reason: error }));
      }
      batch.forEach((w, i) => {
        const result = results[i]!;
        if (result.status === 'fulfilled') w.resolve(result.value);
        else w.reject(result.reason);
      });
      // Callers just answered often submit again at once: when others are about, wait for them, so
      // that they go together in the next batch instead of the first of them alone. A lone caller
      // is not kept waiting.
      if (batch.length > 1 || waiting.length > 0) await new Promise((resolve) => setImmediate(resolve));
    }
    inFlight--;
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (inFlight < concurrency) void flush();
    });
};

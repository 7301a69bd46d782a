/**
 * Rows written per transaction. A BM25 or vector-graph insert costs up to a millisecond a row while
 * indexing keeps the machine busy, and on the embedded database's one connection a search waits for
 * the transaction in progress: a large document (thousands of chunks) is written in slices, so that
 * no search waits for long.
 */
export const WRITE_SLICE = 32;

/**
 * How long one slice's rows may hold the embedded database's connection. A row can cost far more
 * than a millisecond: into a vector graph larger than the database's buffers (250,000 random vectors,
 * the semantic index rebuilt) each took 13.5 ms, and a slice of 32 held every search some 430 ms.
 */
export const SLICE_TARGET_MS = 50;

export interface WriteSlices {
  /** How many rows the next slice writes. */
  next(): number;
  /** Records how long writing `rows` took inside the transaction, the wait for the connection left out. */
  took(rows: number, ms: number): void;
}

/**
 * WRITE_SLICE rows a slice, or fewer where transactions hold searches back (the embedded database)
 * and rows have been costing more than SLICE_TARGET_MS a slice. A row's cost is a running mean that
 * halves the weight of older measures at each new one, so one slow slice does not decide alone. A
 * server's searches read beside a transaction, so its slices stay whole.
 */
export const writeSlices = (holdsSearches: boolean): WriteSlices => {
  let msPerRow = 0;
  return {
    next: () =>
      holdsSearches && msPerRow > 0
        ? Math.max(1, Math.min(WRITE_SLICE, Math.floor(SLICE_TARGET_MS / msPerRow)))
        : WRITE_SLICE,
    took: (rows, ms) => {
      if (rows > 0) msPerRow = msPerRow === 0 ? ms / rows : (msPerRow + ms / rows) / 2;
    },
  };
};

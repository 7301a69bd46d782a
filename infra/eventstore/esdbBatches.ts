/** A stream that says how many items it holds already received, as a Node Readable does. */
export interface BufferedSource<T> extends AsyncIterable<T> {
  readonly readableLength: number;
}

/**
 * Groups a subscription's items into batches of at most `size`. A batch is handed over once it is
 * full or once nothing more is buffered, so a live subscription never waits for a batch to fill,
 * while catching up still moves in full batches. Items `convert` maps to null are dropped. The
 * consumer pulls: the next item is not read until the previous batch has been handled.
 */
export async function* batchesOf<T, R>(
  source: BufferedSource<T>,
  size: number,
  convert: (item: T) => R | null,
): AsyncGenerator<R[]> {
  let batch: R[] = [];
  for await (const item of source) {
    const converted = convert(item);
    if (converted !== null) batch.push(converted);
    if (batch.length >= size || (batch.length > 0 && source.readableLength === 0)) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * What the embedding models of this process are working on, for the metrics endpoint. Every
 * cached embedder adds to these, so they count per process, not per ledger.
 */
export const embeddingActivity = {
  /** Texts handed to the model whose vectors are not back yet. */
  queuedTexts: 0,
  /** Calls to the model running now. */
  callsInFlight: 0,
  /** Vectors the models have made since the process started: their rate is the embedding speed. */
  vectorsMade: 0,
};

/** Runs one call to the model, counting its texts as queued until it returns. */
export const trackEmbedding = async <T>(texts: number, call: () => Promise<T>): Promise<T> => {
  embeddingActivity.queuedTexts += texts;
  embeddingActivity.callsInFlight += 1;
  try {
    return await call();
  } finally {
    embeddingActivity.queuedTexts -= texts;
    embeddingActivity.callsInFlight -= 1;
  }
};

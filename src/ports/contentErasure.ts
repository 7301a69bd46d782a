/** A forgotten document's content: the text hashes of all its versions, and the titles it had. */
export interface ErasureRequest {
  hashes: readonly string[];
  titles: readonly (string | null)[];
}

/**
 * Erases forgotten content wherever the ledger kept it outside the event log: the content store
 * and the embedding cache entries derived from it, down to the bytes of the deleted rows in the
 * database's files. A text that a document not forgotten still holds is kept, for that document's
 * sake.
 */
export interface ContentErasure {
  erase(request: ErasureRequest): Promise<{ erased: number; kept: number }>;
}

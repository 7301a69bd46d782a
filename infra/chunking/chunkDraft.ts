/** A chunk before it gets its index and id. Rows are 0-based and inclusive. */
export interface ChunkDraft {
  start: number;
  end: number;
  text: string;
  kind: string | null;
  symbol: string | null;
  /** False when the text is a slice of one over-long line rather than whole rows. */
  wholeLines: boolean;
}

export interface ChunkLabel {
  readonly kind: string | null;
  readonly symbol: string | null;
}

/** Rows `start..end`, inclusive. */
export interface RowRange {
  readonly start: number;
  readonly end: number;
}

export interface IncomingDocument {
  /** The source's name, e.g. a Lua connector's name. */
  source: string;
  /** The document's id within its source; (source, sourceId) names one document. */
  sourceId: string;
  title: string | null;
  body: string;
  /** ISO 8601, or null when the source does not say. */
  updatedAt: string | null;
  metadata: Record<string, unknown>;
}

/**
 * Where connectors hand documents for ingestion. Ingesting the same (source, sourceId) again with
 * the same body changes nothing and answers `unchanged`.
 */
export interface DocumentSink {
  ingest(document: IncomingDocument): Promise<'created' | 'updated' | 'unchanged'>;
}

import { AppError, NotConfiguredError } from '../errors.js';

/** One item of a remote service as a document: an issue, a pull request, a message thread, an object. */
export interface RemoteItem {
  /** Stable within its connector (`issues/12`, `C024BE91L/1712345678.000100`, `docs/a.md`). */
  sourceId: string;
  title: string | null;
  body: string;
  author: string | null;
  createdAt: string;
  updatedAt: string;
  /** A link to the item in the service, for a reader to open. */
  sourceUrl: string | null;
  contentType?: string;
  metadata: Record<string, unknown>;
}

/** Where a sync resumes: an updated-since time, a page token, an ETag; each connector's own shape, stored in its stream. */
export type SyncCursor = Record<string, unknown>;

export interface RemotePage {
  items: RemoteItem[];
  /** Items the service reported deleted upstream. */
  deleted: string[];
  /** Resumes after this page: written only once the page's items are. */
  cursor: SyncCursor;
}

/**
 * A remote service as a source of documents. Invariants: `changes` yields every item changed since
 * `cursor` (everything when null), in pages, to the end; an item may come again (a resumed or
 * overlapping page) and must then be identical; `liveIds` names every item that exists upstream now,
 * or is null when `changes` reports deletions itself.
 */
export interface RemoteSource {
  changes(cursor: SyncCursor | null): AsyncIterable<RemotePage>;
  liveIds(): Promise<Set<string> | null>;
}

/** Builds the source of a connector from its opened settings; null for kinds that are not remote services. */
export type RemoteSourceFactory = (kind: string, settings: Record<string, unknown>) => RemoteSource | null;

/** A setting the connector needs is missing or malformed. */
export class ConnectorNotConfiguredError extends NotConfiguredError {
  override name = 'ConnectorNotConfiguredError';
}

/** The service refused the connector's credentials, or they lack a permission the sync needs. */
export class ConnectorAccessError extends AppError {
  override name = 'ConnectorAccessError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('CONNECTOR_ACCESS_DENIED', message, details);
  }
}

/** The service failed in a way retries did not cure (still rate-limited, a server error, unreachable). */
export class ConnectorServiceError extends AppError {
  override name = 'ConnectorServiceError';
  constructor(message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super('CONNECTOR_ERROR', message, details, options);
  }
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the stand-in behaves: `up` serves the part of the Meilisearch API the adapter uses; `down`
 * drops every connection as it opens; `failing` answers 503; `refusing` answers 403, as to an API
 * key it does not know; `hanging` accepts requests and never answers; `rejecting` serves, but fails
 * every document addition's task, as Meilisearch does on an index another tool made with another
 * primary key.
 */
export type MeiliStandInMode = 'up' | 'down' | 'failing' | 'refusing' | 'hanging' | 'rejecting';

interface Task {
  uid: number;
  indexUid: string | null;
  type: string;
  status: 'succeeded' | 'failed';
  error: typeof PRIMARY_KEY_TAKEN | null;
}

/**
 * A local HTTP server in Meilisearch's place, for outages on demand. Documents are kept per index
 * by id, as Meilisearch keeps them, so a test can tell that nothing was lost; search finds the
 * chunks that contain a query word, unranked and unfiltered (ranking is not what it stands in for).
 */
export const startMeiliStandIn = async (mode: MeiliStandInMode = 'up') => {
  let current = mode;
  let taskUid = 0;
  const tasks = new Map<number, Task>();
  const indexes = new Map<string, Map<string, Record<string, unknown>>>();
  const hanging = new Set<ServerResponse>();

  const enqueue = (res: ServerResponse, indexUid: string | null, type: string) => {
    const rejected = current === 'rejecting' && type === 'documentAdditionOrUpdate';
    const task: Task = {
      uid: ++taskUid,
      indexUid,
      type,
      status: rejected ? 'failed' : 'succeeded',
      error: rejected ? PRIMARY_KEY_TAKEN : null,
    };
    tasks.set(task.uid, task);
    res.statusCode = 202;
    res.end(JSON.stringify({ taskUid: task.uid, indexUid, status: 'enqueued', type, enqueuedAt: new Date().toISOString() }));
  };

  /** Chunks holding any word of `q` (every chunk for an empty one); filters are not applied. */
  const searchIndex = (uid: string, { q = '', limit = 20 }: SearchQuery) => {
    const words = q.toLowerCase().split(/\W+/).filter(Boolean);
    const matching = [...(indexes.get(uid)?.values() ?? [])].filter(
      (doc) => words.length === 0 || words.some((word) => String(doc.text).toLowerCase().includes(word)),
    );
    const hits = matching
      .slice(0, limit)
      .map((doc) => ({ id: doc.id, document_id: doc.document_id, _rankingScore: 1, _formatted: { text: doc.text } }));
    return { hits, query: q, processingTimeMs: 0, limit, offset: 0, estimatedTotalHits: matching.length };
  };

  const serve = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const { pathname } = new URL(req.url ?? '/', 'http://stand-in');
    res.setHeader('content-type', 'application/json');
    const task = /^\/tasks\/(\d+)$/.exec(pathname);
    if (task) {
      const found = tasks.get(Number(task[1]))!;
      const now = new Date().toISOString();
      res.end(
        JSON.stringify({
          ...found,
          batchUid: 0,
          canceledBy: null,
          duration: 'PT0S',
          enqueuedAt: now,
          startedAt: now,
          finishedAt: now,
        }),
      );
      return;
    }
    if (req.method === 'POST' && pathname === '/indexes') {
      const { uid } = JSON.parse(body) as { uid: string };
      if (!indexes.has(uid)) indexes.set(uid, new Map());
      return enqueue(res, uid, 'indexCreation');
    }
    const documents = /^\/indexes\/([^/]+)\/documents$/.exec(pathname);
    if (req.method === 'POST' && documents) {
      const index = indexes.get(documents[1]!) ?? new Map<string, Record<string, unknown>>();
      indexes.set(documents[1]!, index);
      if (current !== 'rejecting') for (const doc of JSON.parse(body) as Record<string, unknown>[]) index.set(String(doc.id), doc);
      return enqueue(res, documents[1]!, 'documentAdditionOrUpdate');
    }
    const deletion = /^\/indexes\/([^/]+)\/documents\/delete$/.exec(pathname);
    if (req.method === 'POST' && deletion) {
      // Only the stale-chunk filters of replacements arrive here: `document_id IN [...] AND id NOT IN [...]`.
      const { filter } = JSON.parse(body) as { filter: string };
      const [documentIds, keptIds] = filter.split(' AND id NOT IN ').map((part) => [...part.matchAll(/"([^"]+)"/g)].map((m) => m[1]!));
      const index = indexes.get(deletion[1]!);
      for (const [id, doc] of index ?? []) {
        if (documentIds!.includes(String(doc.document_id)) && !(keptIds ?? []).includes(id)) index!.delete(id);
      }
      return enqueue(res, deletion[1]!, 'documentDeletion');
    }
    const search = /^\/indexes\/([^/]+)\/search$/.exec(pathname);
    if (search) {
      res.end(JSON.stringify(searchIndex(search[1]!, JSON.parse(body) as SearchQuery)));
      return;
    }
    if (pathname === '/multi-search') {
      const { queries } = JSON.parse(body) as { queries: (SearchQuery & { indexUid: string })[] };
      res.end(JSON.stringify({ results: queries.map((query) => ({ indexUid: query.indexUid, ...searchIndex(query.indexUid, query) })) }));
      return;
    }
    // Settings, swaps, index deletions: accepted as tasks.
    return enqueue(res, null, 'settingsUpdate');
  };

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      if (current === 'hanging') {
        hanging.add(res);
        return;
      }
      if (current === 'failing' || current === 'refusing') {
        res.statusCode = current === 'failing' ? 503 : 403;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(current === 'failing' ? UNAVAILABLE : KEY_REFUSED));
        return;
      }
      serve(req, res, body);
    });
  });
  // Down keeps the port and drops connections: a closed port could be taken by another process
  // (an outgoing connection's ephemeral port) before the stand-in comes back up.
  server.on('connection', (socket) => {
    if (current === 'down') socket.destroy();
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

  return {
    url: `http://127.0.0.1:${port}`,
    /** The documents an index holds, by id. */
    documents: (indexUid: string): ReadonlyMap<string, Record<string, unknown>> => indexes.get(indexUid) ?? new Map(),
    set(next: MeiliStandInMode): Promise<void> {
      if (next === current) return Promise.resolve();
      if (current === 'hanging') for (const res of hanging) res.destroy();
      hanging.clear();
      current = next;
      if (next === 'down') server.closeAllConnections();
      return Promise.resolve();
    },
    async close() {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
};

/** Meilisearch's own answers, as it words them. */
const UNAVAILABLE = { message: 'Service Unavailable', code: 'internal', type: 'internal', link: '' };
const KEY_REFUSED = {
  message: 'The provided API key is invalid.',
  code: 'invalid_api_key',
  type: 'auth',
  link: 'https://docs.meilisearch.com/errors#invalid_api_key',
};

const PRIMARY_KEY_TAKEN = {
  message: 'Index `ctx_chunks`: Index already has a primary key: `uid`.',
  code: 'index_primary_key_already_exists',
  type: 'invalid_request',
  link: 'https://docs.meilisearch.com/errors#index_primary_key_already_exists',
};

interface SearchQuery {
  q?: string;
  limit?: number;
}

export type MeiliStandIn = Awaited<ReturnType<typeof startMeiliStandIn>>;

import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MeilisearchApiError, MeilisearchRequestError } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchChunk } from '../../src/domain/searchChunks.js';
import { openPglite, type Database } from '../../infra/postgres/database.js';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import { CHUNK_INDEX_SETTINGS, planReplacement } from '../../infra/search/meiliChunkDocuments.js';
import { quoteFilterValue, searchFilter, staleChunksFilter } from '../../infra/search/meiliFilters.js';
import { MAX_TERMS, queryTerms, rankByTerms } from '../../infra/search/meiliRanking.js';
import {
  HIGHLIGHT,
  connectMeilisearch,
  highlightWholeWords,
  createMeiliKeywordIndex,
  translateMeiliError,
  type MeiliScoredChunk,
} from '../../infra/search/meiliKeywordIndex.js';
import { keywordIndexProjection } from '../../projections/search/keywordIndex.js';
import { START, position } from '../../src/domain/position.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import { classifyError, CredentialsRefusedError, isLastingOutage, UnavailableError } from '../../src/errors.js';
import { chunkIdsOf, storedIngestion } from '../support/events.js';
import { startMeiliStandIn } from '../support/meiliStandIn.js';
import { reachableMeilisearch } from './meiliServer.js';

const chunk = (documentId: string, index: number, textHash = `h-${documentId}-${index}`): SearchChunk => ({
  chunkId: `${documentId}-c${index}`,
  documentId,
  project: 'p',
  source: 'filesystem',
  sourceId: `${documentId}.md`,
  title: 'Title',
  tags: ['a'],
  updatedAt: '2026-02-03T04:05:06.000Z',
  chunkIndex: index,
  textHash,
});

describe('Meilisearch filters', () => {
  it('quotes every value and escapes quotes and backslashes inside it', () => {
    expect(quoteFilterValue('plain')).toBe('"plain"');
    expect(quoteFilterValue('say "hi"')).toBe('"say \\"hi\\""');
    expect(quoteFilterValue('C:\\dir\\')).toBe('"C:\\\\dir\\\\"');
    expect(quoteFilterValue('x" OR project = "y')).toBe('"x\\" OR project = \\"y"');
  });

  it('requires the project, the source, every tag and the time range, as epoch milliseconds', () => {
    expect(searchFilter({ project: 'p' })).toBe('project = "p"');
    expect(
      searchFilter({
        project: 'p',
        source: 'git:platform',
        tags: ['ops', 'on "call"'],
        since: '2026-01-01T00:00:00Z',
        until: '2026-01-02T00:00:00+01:00',
      }),
    ).toBe(
      'project = "p" AND source = "git:platform" AND tags = "ops" AND tags = "on \\"call\\"" AND ' +
        `updated_at >= ${Date.UTC(2026, 0, 1)} AND updated_at <= ${Date.UTC(2026, 0, 1, 23)}`,
    );
    expect(() => searchFilter({ project: 'p', since: 'yesterday' })).toThrow(TypeError);
  });

  it('selects the chunks a replacement leaves behind, or all chunks of removed documents', () => {
    expect(staleChunksFilter(['d1', 'd2'], ['c1'])).toBe('document_id IN ["d1", "d2"] AND id NOT IN ["c1"]');
    expect(staleChunksFilter(['d1'], [])).toBe('document_id IN ["d1"]');
  });
});

describe('Meilisearch ranking by query words', () => {
  it('ranks by the distinct words of a query as written, without stop words, and a bounded number of them', () => {
    expect(queryTerms('How does the getUserById lookup handle a missing user? USER')).toEqual([
      'getUserById',
      'lookup',
      'handle',
      'missing',
      'user',
    ]);
    expect(queryTerms('the of and')).toEqual([]);
    expect(queryTerms(Array.from({ length: 50 }, (_, i) => `w${i}`).join(' '))).toHaveLength(MAX_TERMS);
  });

  it('finds a chunk that holds any word, and ranks the one holding more and rarer words higher', () => {
    const hit = (id: string, score = 1) => ({ id, document_id: `d-${id}`, _rankingScore: score });
    const ranked = rankByTerms(
      [
        { matching: 90, hits: [hit('common'), hit('both')] },
        { matching: 2, hits: [hit('rare'), hit('both')] },
      ],
      100,
    );
    expect(ranked.map((r) => r.chunkId)).toEqual(['both', 'rare', 'common']);
    expect(ranked.every((r) => r.score > 0)).toBe(true);
    expect(ranked[0]).toMatchObject({ documentId: 'd-both' });
  });
});

describe('Meilisearch snippets', () => {
  it('highlights the whole word a typo or a prefix matched, and camelCase humps alone', () => {
    // `certficates` typed: Meilisearch marks its length, 11 characters, of `certificates`.
    expect(highlightWholeWords('rotate the \uE000certificate\uE001s before they \uE000exp\uE001ire')).toBe(
      'rotate the **certificates** before they **expire**',
    );
    expect(highlightWholeWords('get\uE000User\uE001ById and \uE000HTTP\uE001Server')).toBe(
      'get**User**ById and **HTTP**Server',
    );
    expect(highlightWholeWords('**bold** stays as written: \uE000bold\uE001')).toBe(
      '**bold** stays as written: **bold**',
    );
  });
});

describe('Meilisearch replacement plan', () => {
  it('adds whole documents keyed by chunk id, with numbers for time, and skips chunks without text', () => {
    const changes = new Map([['d1', [chunk('d1', 0), chunk('d1', 1, 'forgotten')]]]);
    const { additions, deletions } = planReplacement(changes, new Map([['h-d1-0', 'body text']]));
    expect(additions).toEqual([
      [
        {
          id: 'd1-c0',
          document_id: 'd1',
          project: 'p',
          source: 'filesystem',
          source_id: 'd1.md',
          title: 'Title',
          tags: ['a'],
          updated_at: Date.parse('2026-02-03T04:05:06.000Z'),
          chunk_index: 0,
          text: 'body text',
        },
      ],
    ]);
    expect(deletions).toEqual(['document_id IN ["d1"] AND id NOT IN ["d1-c0"]']);
  });

  it('batches large changes: at most 1000 documents per addition and 100 documents per deletion', () => {
    const changes = new Map<string, SearchChunk[]>();
    const texts = new Map<string, string>();
    for (let d = 0; d < 250; d += 1) {
      const chunks = Array.from({ length: 10 }, (_, i) => chunk(`d${d}`, i));
      chunks.forEach((c) => texts.set(c.textHash, 'text'));
      changes.set(`d${d}`, chunks);
    }
    changes.set('removed', []);
    const { additions, deletions } = planReplacement(changes, texts);
    expect(additions.map((batch) => batch.length)).toEqual([1000, 1000, 500]);
    expect(deletions).toHaveLength(3);
    expect(deletions[2]).toContain('"removed"');
    expect(deletions[0]!.match(/"d\d+-c\d+"/g)).toHaveLength(1000);
  });
});

describe('Meilisearch errors', () => {
  it('reports an unreachable server as unavailable', () => {
    const error = translateMeiliError(
      new MeilisearchRequestError('http://127.0.0.1:1', new Error('ECONNREFUSED')),
    );
    expect(error).toBeInstanceOf(UnavailableError);
    const other = new Error('bad filter');
    expect(translateMeiliError(other)).toBe(other);
  });

  it('reports a refused API key as the configuration to mend, naming the setting', () => {
    const refused = translateMeiliError(
      new MeilisearchApiError(new Response(null, { status: 403 }), {
        message: 'The provided API key is invalid.',
        code: 'invalid_api_key',
        type: 'auth',
        link: 'https://docs.meilisearch.com/errors#invalid_api_key',
      }),
    );
    expect(refused).toBeInstanceOf(CredentialsRefusedError);
    expect(classifyError(refused)).toMatchObject({ code: 'CONFIG_ERROR', expected: true, retryable: false });
    expect((refused as Error).message).toBe(
      'Meilisearch refused the configured API key: The provided API key is invalid. (HTTP 403, invalid_api_key). ' +
        "Set search.meilisearch_api_key to a key with the actions docs/deployment.md lists on the ledger's indexes",
    );
  });
});

/** How Meilisearch words a task's failure: one of its own, one of the system under it, and a request it refuses. */
const TASK_ERRORS = {
  internal: { message: 'index corrupted', code: 'internal', type: 'internal', link: '' },
  system: { message: 'No space left on device (os error 28)', code: 'no_space_left_on_device', type: 'system', link: '' },
  invalid_request: {
    message: 'Index `chunks`: Index already has a primary key: `uid`.',
    code: 'index_primary_key_already_exists',
    type: 'invalid_request',
    link: '',
  },
};

/**
 * A stand-in for the Meilisearch HTTP API, just enough to watch the adapter's requests and to make
 * document tasks fail on demand.
 */
const fakeMeilisearch = () => {
  const requests: string[] = [];
  /** The kind of error a document task fails with, or none. */
  let failDocuments: keyof typeof TASK_ERRORS | false = false;
  let taskUid = 0;
  const tasks = new Map<number, { status: string; type: string; indexUid: string | null; error?: object }>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      requests.push(`${req.method} ${url.pathname}`);
      res.setHeader('content-type', 'application/json');
      const task = /^\/tasks\/(\d+)$/.exec(url.pathname);
      if (task) {
        const found = tasks.get(Number(task[1]))!;
        const failed = found.status === 'failed';
        res.end(
          JSON.stringify({
            uid: Number(task[1]),
            batchUid: 0,
            indexUid: found.indexUid,
            status: found.status,
            type: found.type,
            canceledBy: null,
            error: failed ? found.error : null,
            duration: 'PT0S',
            enqueuedAt: new Date().toISOString(),
            startedAt: new Date().toISOString(),
            finishedAt: new Date().toISOString(),
          }),
        );
        return;
      }
      const type = url.pathname.includes('/documents') ? 'documentAdditionOrUpdate' : 'settingsUpdate';
      const failing = url.pathname.includes('/documents') && failDocuments;
      taskUid += 1;
      tasks.set(taskUid, {
        status: failing ? 'failed' : 'succeeded',
        type,
        indexUid: 'chunks',
        ...(failing ? { error: TASK_ERRORS[failing] } : {}),
      });
      res.statusCode = 202;
      res.end(
        JSON.stringify({
          taskUid,
          indexUid: 'chunks',
          status: 'enqueued',
          type,
          enqueuedAt: new Date().toISOString(),
        }),
      );
    });
  });
  return {
    requests,
    failDocuments: (kind: keyof typeof TASK_ERRORS | false) => (failDocuments = kind),
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

describe('Meilisearch projection checkpoint', () => {
  let db: Database;
  const fake = fakeMeilisearch();
  let url: string;

  beforeAll(async () => {
    db = await openPglite();
    url = await fake.start();
  });
  afterAll(async () => {
    await fake.stop();
    await db.close();
  });

  it('moves the checkpoint only after Meilisearch reports the batch’s tasks succeeded', async () => {
    const content = await createPostgresContentStore(db);
    // More chunks than one addition takes: two additions, enqueued before either is waited for.
    const texts = Array.from({ length: 1_001 }, (_, i) => `text ${i}`);
    const event = storedIngestion({
      documentId: randomUUID(),
      hashes: await content.put(texts),
      position: position(1, 1),
    });
    const { projection } = await createMeiliKeywordIndex({
      client: connectMeilisearch({ url }),
      db,
      content,
      keyword: keywordIndexProjection,
      indexUid: 'chunks',
    });

    // Meilisearch failing in itself is an outage, which jobs wait out.
    fake.failDocuments('internal');
    fake.requests.length = 0;
    const failed = projection.live.apply([event], START, event.position);
    await expect(failed).rejects.toThrow(UnavailableError);
    await expect(failed).rejects.toThrow(/index corrupted/);
    expect(await projection.live.checkpoint()).toBe(START);
    // The document's earlier chunks stay found: stale ones are deleted only after every addition.
    expect(fake.requests).not.toContain('POST /indexes/chunks/documents/delete');

    // A full disk under Meilisearch passes once space is freed: an outage too.
    fake.failDocuments('system');
    const outage = projection.live.apply([event], START, event.position);
    await expect(outage).rejects.toThrow(UnavailableError);
    await expect(outage).rejects.toThrow(/No space left on device/);
    expect(await projection.live.checkpoint()).toBe(START);

    // An index another tool made with another primary key: no retry mends it, so waits end at once,
    // saying what is wrong and what makes it right.
    fake.failDocuments('invalid_request');
    const refused = await projection.live.apply([event], START, event.position).catch((error: unknown) => error);
    expect(isLastingOutage(refused)).toBe(true);
    expect(refused).toHaveProperty('code', 'CONFIG_ERROR');
    expect((refused as Error).message).toMatch(
      /Index already has a primary key: `uid`\. \(index_primary_key_already_exists\)\. The index 'chunks' is not as the ledger makes it; `ctx projections rebuild keyword` makes it anew/,
    );
    expect(await projection.live.checkpoint()).toBe(START);

    fake.failDocuments(false);
    fake.requests.length = 0;
    await projection.live.apply([event], START, event.position);
    expect(await projection.live.checkpoint()).toBe(event.position);
    // So that Meilisearch may index them as one batch, at one batch's fixed cost.
    expect(fake.requests.map((r) => r.replace(/\d+$/, 'N'))).toEqual([
      'POST /indexes/chunks/documents',
      'POST /indexes/chunks/documents',
      'GET /tasks/N',
      'GET /tasks/N',
      'POST /indexes/chunks/documents/delete',
      'GET /tasks/N',
    ]);
  });
});

describe('Meilisearch probe, for health checks', () => {
  it.each([
    { mode: 'up', answer: undefined },
    { mode: 'down', answer: /^Meilisearch is unavailable: .*other side closed/ },
    { mode: 'refusing', answer: /^Meilisearch refused the configured API key/ },
    { mode: 'hanging', answer: /^Meilisearch did not answer within 200 ms$/ },
  ] as const)('answers whether the server can be used when it is $mode', async ({ mode, answer }) => {
    const standIn = await startMeiliStandIn(mode);
    const db = await openPglite();
    try {
      const content = await createPostgresContentStore(db);
      const { index } = await createMeiliKeywordIndex({
        client: connectMeilisearch({ url: standIn.url }),
        db,
        content,
        keyword: keywordIndexProjection,
      });
      const probed = index.probe!(200);
      if (answer === undefined) await expect(probed).resolves.toBeUndefined();
      else {
        await expect(probed).rejects.toThrow(UnavailableError);
        await expect(probed).rejects.toThrow(answer);
      }
    } finally {
      await db.close();
      await standIn.close();
    }
  });
});

const meili = await reachableMeilisearch();
if ('url' in meili) {
  describe('Meilisearch keyword search on a server', () => {
    let db: Database;
    const indexUid = `ctx_typos_${randomUUID().replace(/-/g, '')}`;
    const client = connectMeilisearch(meili);

    beforeAll(async () => {
      db = await openPglite();
    });
    afterAll(async () => {
      await client.deleteIndexIfExists(indexUid);
      await db.close();
      await meili.stop();
    });

    let sequence = 0n;
    /** A one-chunk document ingested into `project`, with the chunk's id. */
    const ingested = async (content: ContentStore, text: string, project: string) => {
      const event = storedIngestion({
        documentId: randomUUID(),
        hashes: await content.put([text]),
        title: 'Certificates',
        project,
        position: position(1, (sequence += 1n)),
      });
      const [chunkId] = chunkIdsOf(event);
      return { event, chunkId };
    };

    it('forgives typos and shows the matched words highlighted in the snippet', async () => {
      const content = await createPostgresContentStore(db);
      const { projection, index } = await createMeiliKeywordIndex({ client, db, content, keyword: keywordIndexProjection, indexUid });
      const { event, chunkId } = await ingested(
        content,
        'Rotate the signing certificates before they expire every quarter.',
        'typos',
      );
      await projection.live.apply([event], await projection.live.checkpoint(), event.position);
      const [hit] = (await index.search('certficates', { project: 'typos' }, 5)) as MeiliScoredChunk[];
      expect(hit?.chunkId).toBe(chunkId);
      expect(hit?.snippet).toContain(`${HIGHLIGHT.pre}certificates${HIGHLIGHT.post}`);
    });

    it('weighs each word by its rarity among all of a large project’s chunks, past a thousand', async () => {
      const content = await createPostgresContentStore(db);
      const { projection, index } = await createMeiliKeywordIndex({ client, db, content, keyword: keywordIndexProjection, indexUid });
      // `harbor` is in 1,150 of 1,201 chunks, `lantern` in 1,010: both past the 1,000 that
      // Meilisearch counts by default, where the two would look equally common.
      const texts = [
        'lantern',
        'harbor',
        ...Array.from({ length: 1009 }, (_, i) => `harbor lantern filler${i}`),
        ...Array.from({ length: 140 }, (_, i) => `harbor filler${i}`),
        ...Array.from({ length: 50 }, (_, i) => `filler${i}`),
      ];
      const events = [];
      for (const text of texts) events.push((await ingested(content, text, 'rarity')).event);
      await projection.live.apply(events, await projection.live.checkpoint(), events.at(-1)!.position);
      const [lanternOnly, harborOnly] = events.map((event) => chunkIdsOf(event)[0]);
      const hits = await index.search('harbor lantern', { project: 'rarity' }, 2000);
      const scoreOf = (chunkId: string | undefined) => hits.find((hit) => hit.chunkId === chunkId)?.score ?? 0;
      expect(scoreOf(harborOnly)).toBeGreaterThan(0);
      expect(scoreOf(lanternOnly)).toBeGreaterThan(scoreOf(harborOnly));
    });

    it('rebuilds with a key limited to its indexes, as the deployment guide advises', async () => {
      const limitedUid = `ctx_limited_${randomUUID().replace(/-/g, '')}`;
      const { key, uid: keyUid } = await client.createKey({
        actions: ['search', 'documents.*', 'indexes.*', 'settings.*', 'tasks.get'],
        indexes: [`${limitedUid}*`],
        expiresAt: null,
      });
      try {
        const limited = connectMeilisearch({ url: meili.url, apiKey: key });
        const content = await createPostgresContentStore(db);
        const { projection, index } = await createMeiliKeywordIndex({ client: limited, db, content, keyword: keywordIndexProjection, indexUid: limitedUid });
        const { event, chunkId } = await ingested(content, 'Rotate the signing certificates yearly.', 'limited');
        await projection.live.apply([event], await projection.live.checkpoint(), event.position);

        const shadow = await projection.openShadow();
        await shadow.apply([event], await shadow.checkpoint(), event.position);
        await shadow.promote();

        expect(await projection.live.checkpoint()).toBe(event.position);
        expect((await index.search('certificates', { project: 'limited' }, 5)).map((hit) => hit.chunkId)).toEqual([chunkId]);
        const { results } = await client.getIndexes({ limit: 1000 });
        expect(results.map((found) => found.uid).filter((uid) => uid.startsWith(limitedUid))).toEqual([limitedUid]);
      } finally {
        await client.deleteKey(keyUid);
        await client.deleteIndexIfExists(limitedUid);
      }
    });

    it("says at once that an index of its name is another's, and a rebuild makes it the ledger's", async () => {
      const taken = `ctx_taken_${randomUUID().replace(/-/g, '')}`;
      await client.createIndex(taken, { primaryKey: 'uid' }).waitTask();
      await client.index(taken).addDocuments([{ uid: 1, text: 'another tool' }]).waitTask();
      try {
        const content = await createPostgresContentStore(db);
        const { projection, index } = await createMeiliKeywordIndex({ client, db, content, keyword: keywordIndexProjection, indexUid: taken });
        const { event, chunkId } = await ingested(content, 'Rotate the signing certificates yearly.', 'taken');
        const from = await projection.live.checkpoint();
        const refused = await projection.live.apply([event], from, event.position).catch((error: unknown) => error);
        expect(isLastingOutage(refused)).toBe(true);
        expect((refused as Error).message).toMatch(
          new RegExp(`Index already has a primary key: \`uid\`\\. \\(index_primary_key_already_exists\\)\\. The index '${taken}' is not as the ledger makes it`),
        );
        expect(await projection.live.checkpoint()).toBe(from);

        const shadow = await projection.openShadow();
        await shadow.apply([event], await shadow.checkpoint(), event.position);
        await shadow.promote();
        expect((await client.index(taken).getRawInfo()).primaryKey).toBe('id');
        expect((await index.search('certificates', { project: 'taken' }, 5)).map((hit) => hit.chunkId)).toEqual([chunkId]);
      } finally {
        await client.deleteIndexIfExists(taken);
      }
    });

    it('gives an index it creates, or one an earlier version left, its ranking settings', async () => {
      const older = `ctx_settings_${randomUUID().replace(/-/g, '')}`;
      await client.createIndex(older, { primaryKey: 'id' }).waitTask();
      await client
        .index(older)
        .updateSettings({ stopWords: [], rankingRules: ['words', 'typo'], searchableAttributes: ['*'] })
        .waitTask();
      try {
        const content = await createPostgresContentStore(db);
        const { projection } = await createMeiliKeywordIndex({ client, db, content, keyword: keywordIndexProjection, indexUid: older });
        const { event } = await ingested(content, 'settings are applied', 'settings');
        await projection.live.apply([event], await projection.live.checkpoint(), event.position);
        for (const uid of [older, indexUid]) {
          const { stopWords, ...settings } = await client.index(uid).getSettings();
          expect(new Set(stopWords)).toEqual(new Set(CHUNK_INDEX_SETTINGS.stopWords));
          const { stopWords: _, ...expected } = CHUNK_INDEX_SETTINGS;
          expect(settings).toMatchObject(expected);
        }
      } finally {
        await client.deleteIndexIfExists(older);
      }
    });
  });
} else {
  console.log(`skipped: no Meilisearch reachable — ${meili.skipped}`);
  describe.skip('Meilisearch keyword search on a server (skipped: no Meilisearch reachable)', () => {
    it('needs MEILI_URL or a Docker engine');
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchOutput } from '../../queries/search/searchDocuments.js';
import type { Ledger } from '../../src/main.js';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { openTestLedger } from '../support/ledger.js';
import { EMBEDDING_MODEL, itWith } from '../support/requirements.js';

const context = (): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

/** Paragraphs of about 900 characters, so that every one becomes a chunk of its own. */
const paragraph = (topic: string, i: number) =>
  Array.from(
    { length: 9 },
    (_, s) =>
      `The lighthouse keeper ${topic} in entry ${i}.${s}, trimming the wick and noting the weather at dusk.`,
  ).join(' ');

/**
 * A manual split into four chunks that all match the query, a one-chunk diary that matches it too,
 * and unrelated notes.
 */
const DOCUMENTS = [
  {
    source_id: 'manual',
    title: 'Lighthouse keeping manual',
    body: ['polishes the lens', 'winds the clockwork', 'logs passing ships', 'paints the tower']
      .map(paragraph)
      .join('\n\n'),
  },
  {
    source_id: 'diary',
    title: "A keeper's diary",
    body: 'The lighthouse keeper wrote that the lamp burned all night.',
  },
  {
    source_id: 'bakery',
    title: 'Sourdough',
    body: 'Feed the starter twice a day and bake the loaf at a high heat.',
  },
  {
    source_id: 'garden',
    title: 'Tomatoes',
    body: 'Water tomato plants at the root in the morning, never the leaves.',
  },
];

describe('search ranks documents, each once, at its best chunk', () => {
  let ledger: Ledger;
  const search = async (input: Record<string, unknown>) =>
    (await ledger
      .operation('search')
      .run({ query: 'lighthouse keeper', limit: 4, explain: true, ...input }, context())) as SearchOutput;

  beforeAll(async () => {
    ledger = await openTestLedger();
    await ledger.operation('documents.ingest_batch').run({ source: 'notes', documents: DOCUMENTS }, context());
    await ledger.catchUp();
  }, 120_000);
  afterAll(async () => ledger.close());

  it('splits the manual into one chunk per paragraph', async () => {
    const { results } = await search({ mode: 'keyword' });
    const manual = results.find((r) => r.source_id === 'manual')!;
    const chunks = (await ledger.operation('get').run({ id: manual.id }, context())) as { chunks: unknown[] };
    expect(chunks.chunks).toHaveLength(4);
  });

  it('gives a document its rank among documents, so a split document does not push the others down', async () => {
    const { results } = await search({ mode: 'keyword' });
    expect(
      results
        .map((r) => r.source_id)
        .slice(0, 2)
        .sort(),
    ).toEqual(['diary', 'manual']);
    expect(results.map((r) => r.explain?.keyword?.rank)).toEqual([1, 2]);
    for (const result of results) expect(result.explain?.chunk_id).toBe(result.explain?.keyword?.chunk_id);
  });

  itWith(
    EMBEDDING_MODEL,
    'fuses the two rankings of documents, showing the chunk of the ranking that places the document higher',
    async () => {
      for (const fusion of ['rrf', 'weighted'] as const) {
        const { results } = await search({ mode: 'hybrid', fusion });
        const ids = results.map((r) => r.id);
        expect(new Set(ids).size, fusion).toBe(ids.length);
        expect(
          results
            .map((r) => r.source_id)
            .slice(0, 2)
            .sort(),
          fusion,
        ).toEqual(['diary', 'manual']);
        for (const { explain } of results) {
          const keyword = explain?.keyword;
          const semantic = explain?.semantic;
          const closer = !semantic || (keyword && keyword.rank <= semantic.rank) ? keyword : semantic;
          expect(explain?.chunk_id, fusion).toBe(closer?.chunk_id);
        }
        const ranks = (kind: 'keyword' | 'semantic') =>
          results.flatMap((r) => (r.explain?.[kind] ? [r.explain[kind].rank] : [])).sort((a, b) => a - b);
        // Ranks among documents: the manual's four chunks take one place in each ranking.
        expect(ranks('keyword')).toEqual([1, 2]);
        expect(ranks('semantic').slice(0, 2)).toEqual([1, 2]);
      }
    },
  );
});

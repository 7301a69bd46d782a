import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBeir, ndcgAt10, sampleCorpus } from '../../eval/scifact.js';

const TINY = path.join(import.meta.dirname, 'fixtures/tiny-beir');

describe('BEIR-layout corpora', () => {
  it('reads documents, queries and the positive test judgments (CRLF qrels, header skipped)', () => {
    const corpus = loadBeir(TINY);
    expect(corpus.documents.map((d) => d._id)).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'd6']);
    expect(corpus.queries.get('q1')).toBe('does aspirin prevent heart attacks');
    expect(corpus.qrels).toEqual(
      new Map([
        ['q1', new Set(['d1'])],
        ['q2', new Set(['d2'])],
        ['q3', new Set(['d3', 'd6'])],
      ]),
    );
  });

  it('samples queries and documents by seed, keeping every document a drawn query needs', () => {
    const corpus = loadBeir(TINY);
    const sample = sampleCorpus(corpus, { queries: 2, documents: 4, seed: 11 });
    expect(sample.qrels.size).toBe(2);
    const ids = new Set(sample.documents.map((d) => d._id));
    for (const relevant of sample.qrels.values()) for (const id of relevant) expect(ids.has(id)).toBe(true);
    expect(sample.documents).toHaveLength(4);
    expect(sampleCorpus(corpus, { queries: 2, documents: 4, seed: 11 })).toEqual(sample);
    const seeds = [1, 2, 3, 4, 5, 6].map((seed) =>
      JSON.stringify(sampleCorpus(corpus, { queries: 2, documents: 4, seed }).documents.map((d) => d._id)),
    );
    expect(new Set(seeds).size).toBeGreaterThan(1);
  });

  it('keeps the whole corpus when asked for more than it holds', () => {
    const corpus = loadBeir(TINY);
    const sample = sampleCorpus(corpus, { queries: Infinity, documents: Infinity, seed: 1 });
    expect(sample.documents).toEqual(corpus.documents);
    expect(sample.qrels).toEqual(corpus.qrels);
  });

  it('scores nDCG@10 with binary gains', () => {
    expect(ndcgAt10(['a', 'b'], new Set(['a']))).toBe(1);
    expect(ndcgAt10(['b', 'a'], new Set(['a']))).toBeCloseTo(1 / Math.log2(3));
    expect(ndcgAt10(['x'], new Set(['a']))).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { fuse, RRF_K } from './fusion.js';

/** A chunk hit; `chunkId` is `<document>/<n>`, so chunks of one document share the part before the slash. */
const hit = (chunkId: string, score: number, snippet?: string) => ({
  chunkId,
  documentId: chunkId.split('/')[0]!,
  score,
  snippet,
});

describe('fusion of keyword and semantic rankings into documents', () => {
  const keyword = [hit('a/1', 9), hit('b/1', 5), hit('c/1', 1, 'the <em>match</em>')];
  const semantic = [hit('c/1', 0.9), hit('d/1', 0.8), hit('a/1', 0.1)];

  it('ranks by reciprocal rank, so documents both rankings agree on rise', () => {
    const fused = fuse({ keyword, semantic }, 'rrf');
    expect(
      fused
        .map((f) => f.documentId)
        .slice(0, 2)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(fused.find((f) => f.documentId === 'a')).toMatchObject({
      score: 1 / (RRF_K + 1) + 1 / (RRF_K + 3),
      keyword: { rank: 1, score: 9, chunkId: 'a/1' },
      semantic: { rank: 3, chunkId: 'a/1' },
    });
  });

  it('counts a document split into chunks once per ranking, at its best chunk', () => {
    // x's chunks take the first three keyword places; y is second by both rankings as documents.
    const split = {
      keyword: [hit('x/1', 9), hit('x/2', 8), hit('x/3', 7), hit('y/1', 6)],
      semantic: [hit('z/1', 0.9), hit('y/1', 0.8), hit('x/2', 0.5)],
    };
    const fused = fuse(split, 'rrf');
    expect(fused.map((f) => f.documentId)).toEqual(['x', 'y', 'z']);
    expect(fused.find((f) => f.documentId === 'y')).toMatchObject({
      keyword: { rank: 2 },
      semantic: { rank: 2 },
    });
    expect(fused[0]).toMatchObject({
      keyword: { rank: 1, chunkId: 'x/1' },
      semantic: { rank: 3, chunkId: 'x/2' },
    });
  });

  it('shows the chunk of the ranking that places the document highest, with that index’s snippet', () => {
    const fused = fuse(
      {
        keyword: [hit('p/1', 3), hit('q/2', 2, 'keyword <em>q</em>')],
        semantic: [hit('q/1', 0.9), hit('p/1', 0.4)],
      },
      'rrf',
    );
    expect(fused.find((f) => f.documentId === 'q')).toMatchObject({ chunkId: 'q/1', snippet: null });
    expect(fused.find((f) => f.documentId === 'p')).toMatchObject({ chunkId: 'p/1' });
    const tie = fuse({ keyword: [hit('r/1', 1, 'kw')], semantic: [hit('r/2', 0.5)] }, 'rrf');
    expect(tie[0]).toMatchObject({ chunkId: 'r/1', snippet: 'kw' });
  });

  it('lets a ranking’s first document keep its lead over one both rankings place far down', () => {
    const far = Array.from({ length: 24 }, (_, i) => hit(`filler${i}/1`, 1));
    const fused = fuse(
      {
        keyword: [hit('top/1', 9), ...far, hit('both/1', 1)],
        semantic: [...far.map((h) => ({ ...h, chunkId: `${h.documentId}/2` })), hit('both/1', 0.5)],
      },
      'rrf',
    );
    const position = (id: string) => fused.findIndex((f) => f.documentId === id);
    expect(position('top')).toBeLessThan(position('both'));
  });

  it('averages normalised best-chunk scores in weighted mode', () => {
    const fused = fuse({ keyword, semantic }, 'weighted');
    // a: 0.5·1 + 0.5·0 = 0.5; c: 0.5·0 + 0.5·1 = 0.5; b: 0.5·0.5; d: 0.5·0.875
    expect(fused.map((f) => f.documentId)).toEqual(['a', 'c', 'd', 'b']);
  });

  it('keeps one ranking as it is in single modes, and the index’s own snippet', () => {
    expect(
      fuse({ keyword: [...keyword, hit('a/2', 0.5)], semantic: [] }, 'keyword').map((f) => f.documentId),
    ).toEqual(['a', 'b', 'c']);
    expect(fuse({ keyword: [], semantic }, 'semantic').map((f) => f.score)).toEqual([0.9, 0.8, 0.1]);
    expect(fuse({ keyword, semantic }, 'rrf').find((f) => f.documentId === 'c')?.snippet).toBe(
      'the <em>match</em>',
    );
  });
});

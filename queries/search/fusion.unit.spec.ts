import { describe, expect, it } from 'vitest';
import { adaptiveShare, FEEDBACK_DOCUMENTS, feedbackChunks, fuse, RRF_K, semanticShare } from './fusion.js';

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

  describe('adaptive fusion', () => {
    // A ranking sure of its answer puts it well ahead of the rest; an unsure one ranks a plateau.
    const sure = (first: string, rest: string[]) => [
      hit(`${first}/1`, 0.95),
      ...rest.map((id, i) => hit(`${id}/1`, 0.6 - i * 0.005)),
    ];
    const unsure = (ids: string[]) => ids.map((id, i) => hit(`${id}/1`, 10 - i * 0.05));
    const others = Array.from({ length: 12 }, (_, i) => `o${i}`);

    it('follows the ranking that is sure of its first document, whichever it is', () => {
      const semanticSure = fuse(
        { keyword: unsure(['k', ...others]), semantic: sure('s', [...others, 'k']) },
        'adaptive',
      );
      expect(semanticSure[0]!.documentId).toBe('s');
      const keywordSure = fuse(
        {
          keyword: sure('k', others).map((h) => ({ ...h, score: h.score * 10 })),
          semantic: unsure(['s', ...others]).map((h) => ({ ...h, score: h.score / 20 })),
        },
        'adaptive',
      );
      expect(keywordSure[0]!.documentId).toBe('k');
      // Reciprocal ranks cannot tell the two apart: both firsts tie.
      const rrf = fuse({ keyword: unsure(['k', ...others]), semantic: sure('s', others) }, 'rrf');
      expect(rrf.find((f) => f.documentId === 'k')!.score).toBe(rrf.find((f) => f.documentId === 's')!.score);
    });

    it('gives the semantic ranking a bounded share, all of it when keyword search found nothing', () => {
      const ranks = (scores: number[]) => scores.map((score) => ({ score }));
      expect(semanticShare([], ranks([0.9, 0.5]))).toBe(1);
      expect(semanticShare(ranks([3, 2]), [])).toBe(0);
      const share = semanticShare(ranks([10, 9.99, 9.98, 9.97]), ranks([0.95, 0.5, 0.49, 0.48]));
      expect(share).toBeGreaterThan(0.6);
      expect(share).toBeLessThanOrEqual(0.9);
    });

    it('explains each ranking’s contribution, and they add up to the score', () => {
      for (const document of fuse({ keyword, semantic }, 'adaptive')) {
        const parts = (document.keyword?.contribution ?? 0) + (document.semantic?.contribution ?? 0);
        expect(parts).toBeCloseTo(document.score, 10);
      }
    });

    it('fuses at a share it is given rather than the one the rankings would set', () => {
      const lists = { keyword: unsure(['k', ...others]), semantic: sure('s', [...others, 'k']) };
      expect(adaptiveShare(lists)).toBeGreaterThan(0.6);
      const keywordOnly = fuse(lists, 'adaptive', { share: 0 });
      expect(keywordOnly.map((f) => f.documentId).slice(0, 2)).toEqual(['k', 'o0']);
      expect(keywordOnly.every((f) => (f.semantic?.contribution ?? 0) === 0)).toBe(true);
      expect(fuse(lists, 'adaptive', { share: adaptiveShare(lists) })).toEqual(fuse(lists, 'adaptive'));
    });
  });

  describe('feedback for the semantic query', () => {
    it('names the first fused documents’ chunks when both rankings put the same document first', () => {
      const agreeing = fuse(
        {
          keyword: [hit('a/1', 9), hit('b/1', 8), hit('c/2', 7), hit('d/1', 6)],
          semantic: [hit('a/2', 0.9), hit('b/3', 0.8), hit('e/1', 0.7)],
        },
        'adaptive',
      );
      expect(agreeing.slice(0, FEEDBACK_DOCUMENTS).map((f) => f.documentId)).toEqual(['a', 'b', 'c']);
      // The chunks semantic search found; c's, which it did not find, from keyword search.
      expect(feedbackChunks(agreeing)).toEqual(['a/2', 'b/3', 'c/2']);
    });

    it('names none when the rankings disagree on their first document, or one is empty', () => {
      const disagreeing = fuse({ keyword: [hit('a/1', 9), hit('b/1', 8)], semantic: [hit('b/1', 0.9), hit('a/1', 0.8)] }, 'adaptive');
      expect(feedbackChunks(disagreeing)).toBeNull();
      expect(feedbackChunks(fuse({ keyword: [hit('a/1', 9)], semantic: [] }, 'adaptive'))).toBeNull();
      expect(feedbackChunks([])).toBeNull();
    });
  });
});

import { describe, expect, it } from 'vitest';
import { fuse } from './fusion.js';

const hit = (chunkId: string, score: number, snippet?: string) => ({ chunkId, documentId: `doc-${chunkId}`, score, snippet });

describe('fusion of keyword and semantic rankings', () => {
  const keyword = [hit('a', 9), hit('b', 5), hit('c', 1, 'the <em>match</em>')];
  const semantic = [hit('c', 0.9), hit('d', 0.8), hit('a', 0.1)];

  it('ranks by reciprocal rank, so chunks both lists agree on rise', () => {
    const fused = fuse({ keyword, semantic }, 'rrf');
    expect(fused.map((f) => f.chunkId).slice(0, 2).sort()).toEqual(['a', 'c']);
    expect(fused.find((f) => f.chunkId === 'a')).toMatchObject({ keyword: { rank: 1, score: 9 }, semantic: { rank: 3 } });
  });

  it('averages normalised scores in weighted mode', () => {
    const fused = fuse({ keyword, semantic }, 'weighted');
    // a: 0.5·1 + 0.5·0 = 0.5; c: 0.5·0 + 0.5·1 = 0.5; b: 0.5·0.5; d: 0.5·0.875
    expect(fused.map((f) => f.chunkId)).toEqual(['a', 'c', 'd', 'b']);
  });

  it('keeps one ranking as it is in single modes, and the index’s own snippet', () => {
    expect(fuse({ keyword, semantic: [] }, 'keyword').map((f) => f.chunkId)).toEqual(['a', 'b', 'c']);
    expect(fuse({ keyword, semantic }, 'rrf').find((f) => f.chunkId === 'c')?.snippet).toBe('the <em>match</em>');
  });
});

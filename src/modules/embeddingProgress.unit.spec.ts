import { describe, expect, it } from 'vitest';
import { embeddingProgressLine } from './embeddingProgress.js';

describe('embedding progress line', () => {
  it('says how many chunks are embedded, how fast, and about how long the rest takes', () => {
    expect(embeddingProgressLine(1200, 5183, 42)).toBe('embedding: 1,200 / 5,183 chunks, 42 chunks/s, about 2 min left');
    expect(embeddingProgressLine(5000, 5183, 42)).toBe('embedding: 5,000 / 5,183 chunks, 42 chunks/s, about 4 s left');
  });

  it('leaves out the rate until one is measured', () => {
    expect(embeddingProgressLine(0, 5183, 0)).toBe('embedding: 0 / 5,183 chunks');
  });
});

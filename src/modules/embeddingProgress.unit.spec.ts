import { describe, expect, it } from 'vitest';
import type { EmbeddingBacklog } from '../ports/searchIndex.js';
import { embeddingProgressCheck, embeddingProgressLine } from './embeddingProgress.js';

describe('embedding progress line', () => {
  it('says how many chunks are embedded, how fast, and about how long the rest takes', () => {
    expect(embeddingProgressLine(1200, 5183, 42)).toBe('embedding: 1,200 / 5,183 chunks, 42 chunks/s, about 2 min left');
    expect(embeddingProgressLine(5000, 5183, 42)).toBe('embedding: 5,000 / 5,183 chunks, 42 chunks/s, about 4 s left');
  });

  it('leaves out the rate until one is measured', () => {
    expect(embeddingProgressLine(0, 5183, 0)).toBe('embedding: 0 / 5,183 chunks');
  });
});

describe('embedding progress check', () => {
  const watched = (state: { behind: boolean; backlog: EmbeddingBacklog }) => {
    const lines: string[] = [];
    let counts = 0;
    const check = embeddingProgressCheck({
      behind: () => Promise.resolve(state.behind),
      backlog: () => {
        counts += 1;
        return Promise.resolve(state.backlog);
      },
      vectorsMade: () => state.backlog.rows,
      log: (line) => lines.push(line),
    });
    return { check, lines, counts: () => counts };
  };

  it('counts no chunks while the semantic projection has nothing left to apply', async () => {
    const { check, lines, counts } = watched({ behind: false, backlog: { rows: 10, total: 10 } });
    await check();
    await check();
    expect(counts()).toBe(0);
    expect(lines).toEqual([]);
  });

  it('reports while it is behind, then says once that every chunk is embedded, then stops counting', async () => {
    const state = { behind: true, backlog: { rows: 200, total: 1000 } };
    const { check, lines, counts } = watched(state);
    await check();
    expect(lines).toEqual(['embedding: 200 / 1,000 chunks']);
    state.behind = false;
    state.backlog = { rows: 1000, total: 1000 };
    await check();
    expect(lines.at(-1)).toBe('embedding: all 1,000 chunks embedded');
    await check();
    expect(lines).toHaveLength(2);
    expect(counts()).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import { formatComparison, formatDifference, formatLoo, formatRuns, type CorpusRun } from '../../eval/table.js';

const perQuery = (values: number[]) => Object.fromEntries(values.map((v, i) => [`q${i}`, v]));

const run = (corpus: string, keyword: number[], semantic: number[], hybrid: number[], extra: Partial<CorpusRun> = {}): CorpusRun => ({
  corpus,
  sample: { queries: keyword.length, ofQueries: 300, documents: 2500, ofDocuments: 2500, seed: 1 },
  embeddings: 'model@q8',
  fusion: 'adaptive',
  scores: { keyword: perQuery(keyword), semantic: perQuery(semantic), hybrid: perQuery(hybrid) },
  hybridLatency: { p50: 12.34, p95: 31.2 },
  ...extra,
});

const repeat = (pattern: number[], times: number) => Array.from({ length: times }, () => pattern).flat();

describe('eval tables', () => {
  it('prints each mode per corpus, hybrid against the better single mode with its noise, BM25 against the published figure, and recall@100', () => {
    const table = formatRuns([
      run('scifact', repeat([0.6, 0.7], 20), repeat([0.7, 0.8], 20), repeat([0.8, 0.9], 20), {
        publishedBm25: 0.665,
        recall100: { keyword: 0.9, semantic: 0.95, hybrid: 0.97 },
      }),
      run('code', repeat([0.2, 0.3], 20), repeat([0.6, 0.4], 20), repeat([0.4, 0.6], 20)),
    ]);
    const [header, scifact, code] = table.split('\n');
    expect(header).toMatch(/^corpus\s+documents\s+queries\s+keyword\s+semantic\s+hybrid/);
    expect(scifact).toMatch(/^scifact\s+2500\/2500\s+40\/300\s+0\.6500\s+0\.7500\s+0\.8500\s+\+0\.1000 ±0\.0000 ▲ vs semantic\s+0\.665 \(−0\.0150\)\s+31\.2 ms\s+0\.9000 \/ 0\.9500 \/ 0\.9700$/);
    expect(header).toMatch(/recall@100 k \/ s \/ h$/);
    // A run made before recall was measured shows none.
    expect(code).toMatch(/31\.2 ms\s+—$/);
    // Hybrid equals semantic on average, query by query it swings: within noise.
    expect(code).toMatch(/\+0\.0000 ±0\.\d{4} ≈ vs semantic/);
    expect(table).toMatch(/≈ within noise/);
  });

  it('says when the BM25 figure is for the whole corpus and the run sampled it', () => {
    const sampled = run('scifact', [0.7], [0.7], [0.7], {
      publishedBm25: 0.665,
      sample: { queries: 1, ofQueries: 300, documents: 2500, ofDocuments: 5183, seed: 1 },
    });
    expect(formatRuns([sampled])).toMatch(/0\.665 \(\+0\.0350, sampled corpus\)/);
  });

  it('compares two persisted runs per corpus and mode', () => {
    const before = { createdAt: '', corpora: [run('a', repeat([0.5], 30), repeat([0.5], 30), repeat([0.5], 30))] };
    const after = { createdAt: '', corpora: [run('a', repeat([0.5], 30), repeat([0.5], 30), repeat([0.6, 0.62], 15))] };
    const lines = formatComparison(before, after).split('\n');
    expect(lines[0]).toMatch(/^corpus\s+mode\s+before\s+after\s+after − before/);
    expect(lines.find((l) => l.includes('hybrid'))).toMatch(/0\.5000\s+0\.6100\s+\+0\.1100 ±0\.00\d\d ▲/);
    expect(lines.find((l) => l.includes('keyword'))).toMatch(/\+0\.0000 ±0\.0000 ≈/);
    expect(formatComparison(before, { createdAt: '', corpora: [] })).toBe('The two runs share no corpus.');
  });

  it('prints the leave-one-corpus-out rows and the decision', () => {
    const d = { mean: -0.02, low: -0.03, high: -0.01, withinNoise: false };
    expect(formatDifference(d)).toBe('−0.0200 ±0.0100 ▼');
    const text = formatLoo(
      {
        rows: [{ heldOut: 'a', chosen: 'rrf k=60', chosenScore: 0.5, defaultScore: 0.52, difference: d }],
        candidate: 'rrf k=60',
        versusDefault: { a: d },
        adopt: false,
        reason: 'rrf k=60 loses more than noise on a',
      },
      'adaptive',
    );
    expect(text).toMatch(/^held out\s+chosen on the others/);
    expect(text).toMatch(/\na\s+rrf k=60\s+0\.5000\s+0\.5200\s+−0\.0200 ±0\.0100 ▼/);
    expect(text).toMatch(/keep the default: rrf k=60 loses more than noise on a$/);
  });
});

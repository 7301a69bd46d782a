import { pairedBootstrap, paired, type Difference } from './bootstrap.js';
import type { LooResult, QueryLists } from './loo.js';

export const MODES = ['keyword', 'semantic', 'hybrid'] as const;
export type Mode = (typeof MODES)[number];

/** One corpus's run, as persisted: per-query nDCG@10 per mode, so runs can be compared later. */
export interface CorpusRun {
  corpus: string;
  sample: { queries: number; ofQueries: number; documents: number; ofDocuments: number; seed: number };
  /** The vector space the documents were embedded in (model and weights), or null without a model. */
  embeddings: string | null;
  /** The hybrid fusion measured. */
  fusion: string;
  scores: Partial<Record<Mode, Record<string, number>>>;
  /** Hybrid search, each query embedded as it is searched (ms). */
  hybridLatency?: { p50: number; p95: number };
  /** Mean recall@100 per mode: how much of what is relevant the first 100 results hold (what a reranker can reorder). */
  recall100?: Partial<Record<Mode, number>>;
  /** A published keyword (BM25) nDCG@10 for the full corpus, when one is known. */
  publishedBm25?: number;
  /** Both rankings per query, for replaying fusion settings. */
  lists?: Record<string, QueryLists>;
}

export interface RunFile {
  createdAt: string;
  corpora: CorpusRun[];
}

const mean = (scores: Readonly<Record<string, number>> | undefined) => {
  const values = Object.values(scores ?? {});
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
};

const signed = (n: number) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(4)}`;

/** "≈" within noise, "▲"/"▼" beyond it. */
export const mark = (d: Difference) => (d.withinNoise ? '≈' : d.mean > 0 ? '▲' : '▼');

/** A difference with its 95% interval and its mark, e.g. `+0.0123 ±0.0081 ▲`. */
export const formatDifference = (d: Difference) =>
  `${signed(d.mean)} ±${((d.high - d.low) / 2).toFixed(4)} ${mark(d)}`;

const fixed = (n: number) => (Number.isNaN(n) ? '   —  ' : n.toFixed(4));

const differenceOf = (
  before: Readonly<Record<string, number>> | undefined,
  after: Readonly<Record<string, number>> | undefined,
  seed: number,
) => {
  if (!before || !after) return undefined;
  const pair = paired(before, after);
  return pairedBootstrap(pair.before, pair.after, { seed });
};

const pad = (rows: string[][]) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...(r[i] ?? '')].length)));
  return rows.map((r) => r.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join('  ').trimEnd()).join('\n');
};

/**
 * The multi-corpus table: nDCG@10 per mode and corpus, hybrid against the better single mode
 * (with the 95% interval of the difference, from a paired bootstrap over the queries), keyword
 * against a published BM25 figure where one exists (only meaningful on the whole corpus), and
 * hybrid latency.
 */
export const formatRuns = (runs: readonly CorpusRun[], seed = 1): string => {
  const rows = [
    [
      'corpus',
      'documents',
      'queries',
      'keyword',
      'semantic',
      'hybrid',
      'hybrid − best single (95%)',
      'keyword vs BM25',
      'hybrid p95',
      'recall@100 k / s / h',
    ],
  ];
  for (const run of runs) {
    const [keyword, semantic, hybrid] = MODES.map((m) => mean(run.scores[m]));
    const best: Mode = (semantic ?? NaN) > (keyword ?? NaN) ? 'semantic' : 'keyword';
    const d = differenceOf(run.scores[best], run.scores.hybrid, seed);
    const whole = run.sample.documents === run.sample.ofDocuments;
    const bm25 =
      run.publishedBm25 === undefined
        ? '—'
        : `${run.publishedBm25.toFixed(3)} (${signed(keyword! - run.publishedBm25)}${whole ? '' : ', sampled corpus'})`;
    rows.push([
      run.corpus,
      `${run.sample.documents}/${run.sample.ofDocuments}`,
      `${run.sample.queries}/${run.sample.ofQueries}`,
      fixed(keyword!),
      fixed(semantic!),
      fixed(hybrid!),
      d ? `${formatDifference(d)} vs ${best}` : '—',
      bm25,
      run.hybridLatency ? `${run.hybridLatency.p95.toFixed(1)} ms` : '—',
      run.recall100 ? MODES.map((m) => (run.recall100?.[m] === undefined ? '—' : fixed(run.recall100[m]))).join(' / ') : '—',
    ]);
  }
  return `${pad(rows)}\n± is half the 95% interval of the paired difference; ≈ within noise, ▲/▼ beyond it.`;
};

/** Before against after, per corpus and mode: the change in nDCG@10 with its noise. */
export const formatComparison = (before: RunFile, after: RunFile, seed = 1): string => {
  const rows = [['corpus', 'mode', 'before', 'after', 'after − before (95%)']];
  for (const next of after.corpora) {
    const previous = before.corpora.find((c) => c.corpus === next.corpus);
    if (!previous) continue;
    for (const mode of MODES) {
      const d = differenceOf(previous.scores[mode], next.scores[mode], seed);
      if (!d) continue;
      rows.push([next.corpus, mode, fixed(mean(previous.scores[mode])), fixed(mean(next.scores[mode])), formatDifference(d)]);
    }
  }
  return rows.length === 1 ? 'The two runs share no corpus.' : pad(rows);
};

/** The leave-one-corpus-out table and the decision it leads to. */
export const formatLoo = (loo: LooResult, defaultName: string): string => {
  const rows = [['held out', 'chosen on the others', 'held-out nDCG@10', 'default', 'chosen − default (95%)']];
  for (const r of loo.rows)
    rows.push([r.heldOut, r.chosen, fixed(r.chosenScore), fixed(r.defaultScore), formatDifference(r.difference)]);
  const versus = Object.entries(loo.versusDefault)
    .map(([corpus, d]) => `  ${corpus}: ${formatDifference(d)}`)
    .join('\n');
  return [
    pad(rows),
    `default: ${defaultName}; best over all corpora: ${loo.candidate}`,
    `${loo.candidate} − default per corpus:\n${versus}`,
    `${loo.adopt ? 'adopt' : 'keep the default'}: ${loo.reason}`,
  ].join('\n');
};

/** Mean nDCG@10 of every setting on every corpus (replayed fusion). */
export const formatGrid = (scores: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, number>>>>>>): string => {
  const corpora = Object.keys(scores).sort();
  const names = Object.keys(scores[corpora[0]!] ?? {});
  const rows = [['setting (replayed)', ...corpora, 'mean']];
  for (const name of names) {
    const means = corpora.map((c) => mean(scores[c]![name]));
    rows.push([name, ...means.map(fixed), fixed(means.reduce((a, b) => a + b, 0) / means.length)]);
  }
  return pad(rows);
};

import { DEFAULT_FUSION_SETTINGS, fuse, type FusionSettings } from '../queries/search/fusion.js';
import { pairedBootstrap, paired, type Difference } from './bootstrap.js';
import { ndcgAt10 } from './scifact.js';

/** One document of a ranking as search answered it: its id and score. */
export interface Ranked {
  id: string;
  score: number;
}

/** What a query's fusion is replayed from: both rankings (documents, best first) and the answer. */
export interface QueryLists {
  keyword: Ranked[];
  semantic: Ranked[];
  relevant: string[];
}

/** A hybrid fusion setting to choose among. */
export interface Setting {
  name: string;
  fusion: 'adaptive' | 'rrf' | 'weighted';
  settings: FusionSettings;
}

const settingName = (fusion: Setting['fusion'], s: FusionSettings) =>
  fusion === 'adaptive'
    ? `adaptive p=${s.prior} [${s.range[0]},${s.range[1]}]`
    : fusion === 'rrf'
      ? `rrf k=${s.rrfK}`
      : 'weighted';

const setting = (fusion: Setting['fusion'], changes: Partial<FusionSettings> = {}): Setting => {
  const settings = { ...DEFAULT_FUSION_SETTINGS, ...changes };
  return { name: settingName(fusion, settings), fusion, settings };
};

/** The shipped default: adaptive fusion with the default constants. */
export const DEFAULT_SETTING: Setting = setting('adaptive');

const candidates: Setting[] = [
  DEFAULT_SETTING,
  ...[0.4, 0.5, 0.6, 0.7, 0.8].map((prior) => setting('adaptive', { prior, range: [0.3, 0.9] })),
  ...[0.5, 0.6, 0.7, 0.8].map((prior) => setting('adaptive', { prior, range: [0.1, 0.95] })),
  ...[0.6, 0.7, 0.8].map((prior) => setting('adaptive', { prior, range: [0.5, 0.95] })),
  ...[10, 30, 60].map((rrfK) => setting('rrf', { rrfK })),
  setting('weighted'),
];

/** The settings leave-one-corpus-out chooses among, each once: the default first. */
export const SETTINGS_GRID: readonly Setting[] = candidates.filter(
  (s, i) => candidates.findIndex((other) => other.name === s.name) === i,
);

const asChunks = (ranking: readonly Ranked[]) =>
  ranking.map((r) => ({ chunkId: r.id, documentId: r.id, score: r.score }));

/**
 * nDCG@10 per query of one setting, fusing the recorded rankings again. The replay fuses document
 * rankings (each document at its best chunk's score) and leaves out the pseudo-relevance feedback
 * that adaptive search adds when both rankings agree on the first document, so it compares settings
 * with each other; the real search run measures the chosen one.
 */
export const replay = (lists: Readonly<Record<string, QueryLists>>, choice: Setting): Record<string, number> =>
  Object.fromEntries(
    Object.entries(lists).map(([id, q]) => {
      const fused = fuse({ keyword: asChunks(q.keyword), semantic: asChunks(q.semantic) }, choice.fusion, {
        settings: choice.settings,
      });
      return [id, ndcgAt10(fused.map((f) => f.documentId), new Set(q.relevant))];
    }),
  );

const mean = (scores: Readonly<Record<string, number>>) => {
  const values = Object.values(scores);
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
};

/** Per corpus, per setting name, per query: nDCG@10. */
export type SettingScores = Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, number>>>>>>;

export interface LooRow {
  heldOut: string;
  /** The setting best on average over the other corpora. */
  chosen: string;
  chosenScore: number;
  defaultScore: number;
  /** Chosen − default on the held-out corpus. */
  difference: Difference;
}

export interface LooResult {
  rows: LooRow[];
  /** The setting best on average over every corpus: what would become the default. */
  candidate: string;
  /** Per corpus: candidate − default, with its noise. */
  versusDefault: Record<string, Difference>;
  adopt: boolean;
  reason: string;
}

const bestOn = (scores: SettingScores, corpora: readonly string[], names: readonly string[]): string =>
  names
    .map((name) => ({ name, score: corpora.reduce((sum, c) => sum + mean(scores[c]![name]!), 0) / corpora.length }))
    .reduce((best, next) => (next.score > best.score + 1e-12 ? next : best)).name;

const versus = (scores: SettingScores, corpus: string, name: string, defaultName: string, seed: number) => {
  const { before, after } = paired(scores[corpus]![defaultName]!, scores[corpus]![name]!);
  return pairedBootstrap(before, after, { seed });
};

/**
 * Leave one corpus out: for each corpus, the setting best on the others, scored on it against the
 * default. The setting best over all corpora is adopted only when it beats the default on the
 * held-out average and no corpus loses more than noise against the default (the 95% interval of
 * its difference lies wholly below zero).
 */
export const leaveOneOut = (scores: SettingScores, defaultName: string, seed = 1): LooResult => {
  const corpora = Object.keys(scores).sort();
  const names = Object.keys(scores[corpora[0]!] ?? {});
  const rows = corpora.map((heldOut) => {
    const chosen = bestOn(
      scores,
      corpora.filter((c) => c !== heldOut),
      names,
    );
    return {
      heldOut,
      chosen,
      chosenScore: mean(scores[heldOut]![chosen]!),
      defaultScore: mean(scores[heldOut]![defaultName]!),
      difference: versus(scores, heldOut, chosen, defaultName, seed),
    };
  });
  const candidate = bestOn(scores, corpora, names);
  const versusDefault = Object.fromEntries(corpora.map((c) => [c, versus(scores, c, candidate, defaultName, seed)]));
  const looGain = rows.reduce((sum, r) => sum + r.chosenScore - r.defaultScore, 0) / Math.max(1, rows.length);
  const losers = corpora.filter((c) => versusDefault[c]!.high < 0);
  const adopt = candidate !== defaultName && looGain > 0 && losers.length === 0;
  const reason =
    candidate === defaultName
      ? 'the default is already best over all corpora'
      : looGain <= 0
        ? `settings chosen on the other corpora score ${looGain.toFixed(4)} against the default on the held-out one, on average`
        : losers.length > 0
          ? `${candidate} loses more than noise on ${losers.join(', ')}`
          : `${candidate} gains ${looGain.toFixed(4)} held out on average and loses on no corpus beyond noise`;
  return { rows, candidate, versusDefault, adopt, reason };
};

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { seededRandom } from './bootstrap.js';
import type { SearchOutput } from '../queries/search/searchDocuments.js';
import type { Ledger } from '../src/main.js';
import { type OperationContext } from '../src/operations.js';
import { DEFAULT_PROJECT } from '../src/domain/workspace.js';

/** BEIR SciFact, as shipped in the shared data folder. */
export const SCIFACT_DIR = path.resolve(import.meta.dirname, '../../shared/data/scifact');

export interface Corpus {
  documents: { _id: string; title: string; text: string }[];
  queries: Map<string, string>;
  /** query id → relevant document ids (all relevance 1). */
  qrels: Map<string, Set<string>>;
}

const jsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as T);

/** The files of a dataset in the BEIR layout. */
export const BEIR_FILES = ['corpus.jsonl', 'queries.jsonl', 'qrels/test.tsv'] as const;

/** A corpus in the BEIR layout: `corpus.jsonl`, `queries.jsonl` and `qrels/test.tsv`. */
export const loadBeir = (dir: string): Corpus => {
  const qrels = new Map<string, Set<string>>();
  for (const line of readFileSync(path.join(dir, 'qrels/test.tsv'), 'utf8').split('\n').slice(1)) {
    const [query, doc, score] = line.replace('\r', '').split('\t');
    if (!query || !doc || Number(score) <= 0) continue;
    if (!qrels.has(query)) qrels.set(query, new Set());
    qrels.get(query)!.add(doc);
  }
  const queries = new Map(jsonl<{ _id: string; text: string }>(path.join(dir, 'queries.jsonl')).map((q) => [q._id, q.text]));
  return { documents: jsonl(path.join(dir, 'corpus.jsonl')), queries, qrels };
};

export const loadScifact = (dir = SCIFACT_DIR): Corpus => loadBeir(dir);

/** nDCG@10 with binary gains: the metric BEIR reports. */
export const ndcgAt10 = (ranked: readonly string[], relevant: ReadonlySet<string>): number => {
  const dcg = ranked.slice(0, 10).reduce((sum, id, i) => sum + (relevant.has(id) ? 1 / Math.log2(i + 2) : 0), 0);
  const ideal = [...Array(Math.min(10, relevant.size)).keys()].reduce((sum, i) => sum + 1 / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
};

/** The share of the relevant documents found in the first `k` of `ranked`. */
export const recallAt = (k: number, ranked: readonly string[], relevant: ReadonlySet<string>): number =>
  relevant.size === 0 ? 0 : ranked.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;

/** Fisher–Yates with a seeded generator: the first `count` of a shuffled copy. */
const sample = <T>(items: readonly T[], count: number, random: () => number): T[] => {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, count);
};

/**
 * A seeded sample that embeds in minutes: `queries` test queries drawn at random (those with a
 * text), every document relevant to a drawn query, and documents drawn at random from the others
 * up to `documents` in all (all of them when `documents` is at least the corpus size).
 */
export const sampleCorpus = (
  corpus: Corpus,
  { queries, documents, seed }: { queries: number; documents: number; seed: number },
): Corpus => {
  const random = seededRandom(seed);
  const asked = [...corpus.qrels.keys()].filter((id) => corpus.queries.has(id)).sort();
  const drawn = new Set(sample(asked, queries, random));
  const qrels = new Map([...corpus.qrels].filter(([id]) => drawn.has(id)));
  const relevant = new Set([...qrels.values()].flatMap((s) => [...s]));
  const others = corpus.documents.filter((d) => !relevant.has(d._id));
  const kept = corpus.documents.filter((d) => relevant.has(d._id));
  const fill = new Set(sample(others, Math.max(0, documents - kept.length), random).map((d) => d._id));
  return { ...corpus, qrels, documents: corpus.documents.filter((d) => relevant.has(d._id) || fill.has(d._id)) };
};

/** The context of the eval's operation calls. */
export const context = (): OperationContext => ({
  actor: { subject: 'eval', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

/** Ingests the corpus (title + text per document) and waits until every index has it; returns the seconds taken. */
export const ingestCorpus = async (
  ledger: Ledger,
  corpus: Corpus,
  onProgress?: (done: number) => void,
  source = 'scifact',
): Promise<number> => {
  const started = performance.now();
  const ingest = ledger.operation('documents.ingest_batch');
  for (let i = 0; i < corpus.documents.length; i += 200) {
    const documents = corpus.documents.slice(i, i + 200).map((d) => ({ source_id: d._id, title: d.title, body: d.text }));
    await ingest.run({ source, documents }, context());
    onProgress?.(Math.min(corpus.documents.length, i + 200));
  }
  // A large corpus with embeddings on a slow machine may take longer than one catch-up allows.
  for (;;) {
    try {
      await ledger.catchUp();
      break;
    } catch (error) {
      if (!/did not reach/.test((error as Error).message)) throw error;
      process.stderr.write(`still indexing after ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
    }
  }
  return (performance.now() - started) / 1000;
};

export interface ModeFigures {
  mode: 'keyword' | 'semantic' | 'hybrid';
  ndcg10: number;
  /** nDCG@10 per query id. */
  perQuery: Record<string, number>;
  /** Recall in the first 100 results (a second pass at limit 100, untimed). */
  recall100: number;
  p50Ms: number;
  p95Ms: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Runs every test query in one mode, timing each search: with its query's embedding, unless an earlier mode made it. */
export const evaluateMode = async (
  ledger: Ledger,
  corpus: Corpus,
  mode: ModeFigures['mode'],
  fusion: string = 'rrf',
  { withRecall = false, extra = {} }: { withRecall?: boolean; extra?: Record<string, unknown> } = {},
): Promise<ModeFigures> => {
  const search = ledger.operation('search');
  const scores: number[] = [];
  const perQuery: Record<string, number> = {};
  const recalls: number[] = [];
  const latencies: number[] = [];
  const ranked = async (query: string, limit: number) =>
    ((await search.run({ query, mode, fusion, limit, ...extra }, context())) as SearchOutput).results.map(
      (r) => r.source_id,
    );
  for (const [queryId, relevant] of corpus.qrels) {
    const query = corpus.queries.get(queryId);
    if (!query) continue;
    const started = performance.now();
    const top10 = await ranked(query, 10);
    latencies.push(performance.now() - started);
    scores.push(ndcgAt10(top10, relevant));
    perQuery[queryId] = scores.at(-1)!;
    if (withRecall) recalls.push(recallAt(100, await ranked(query, 100), relevant));
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  return {
    mode,
    ndcg10: mean(scores),
    perQuery,
    recall100: withRecall ? mean(recalls) : NaN,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
  };
};

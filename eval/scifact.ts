import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SearchOutput } from '../queries/searchDocuments.js';
import type { Ledger } from '../src/main.js';
import { DEFAULT_PROJECT, type OperationContext } from '../src/operations.js';

/** BEIR SciFact, as shipped in the shared data folder. */
export const SCIFACT_DIR = path.resolve(import.meta.dirname, '../../shared/data/scifact');

interface Corpus {
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

export const loadScifact = (dir = SCIFACT_DIR): Corpus => {
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

/** nDCG@10 with binary gains: the metric BEIR reports. */
export const ndcgAt10 = (ranked: readonly string[], relevant: ReadonlySet<string>): number => {
  const dcg = ranked.slice(0, 10).reduce((sum, id, i) => sum + (relevant.has(id) ? 1 / Math.log2(i + 2) : 0), 0);
  const ideal = [...Array(Math.min(10, relevant.size)).keys()].reduce((sum, i) => sum + 1 / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
};

/** A subset for quick runs: every document relevant to the first `queries` test queries plus `distractors` others. */
export const subset = (corpus: Corpus, queries: number, distractors: number): Corpus => {
  const qrels = new Map([...corpus.qrels].slice(0, queries));
  const relevant = new Set([...qrels.values()].flatMap((s) => [...s]));
  const others = corpus.documents.filter((d) => !relevant.has(d._id)).slice(0, distractors);
  return { ...corpus, qrels, documents: [...corpus.documents.filter((d) => relevant.has(d._id)), ...others] };
};

const context = (): OperationContext => ({
  actor: { subject: 'eval', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

/** Ingests the corpus (title + text per document) and waits until every index has it; returns the seconds taken. */
export const ingestCorpus = async (ledger: Ledger, corpus: Corpus, onProgress?: (done: number) => void): Promise<number> => {
  const started = performance.now();
  const ingest = ledger.operation('ingest_documents');
  for (let i = 0; i < corpus.documents.length; i += 200) {
    const documents = corpus.documents.slice(i, i + 200).map((d) => ({ source_id: d._id, title: d.title, body: d.text }));
    await ingest.run({ source: 'scifact', documents }, context());
    onProgress?.(Math.min(corpus.documents.length, i + 200));
  }
  await ledger.catchUp();
  return (performance.now() - started) / 1000;
};

export interface ModeFigures {
  mode: 'keyword' | 'semantic' | 'hybrid';
  ndcg10: number;
  p50Ms: number;
  p95Ms: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Runs every test query in one mode, timing each search (the query embedding included). */
export const evaluateMode = async (
  ledger: Ledger,
  corpus: Corpus,
  mode: ModeFigures['mode'],
  fusion: 'rrf' | 'weighted' = 'rrf',
): Promise<ModeFigures> => {
  const search = ledger.operation('search');
  // Every mode embeds its queries anew: cached by an earlier mode, they would cost nothing here.
  if (mode !== 'keyword') await ledger.db.query(`DELETE FROM embedding_cache WHERE model LIKE '%#query'`);
  const scores: number[] = [];
  const latencies: number[] = [];
  for (const [queryId, relevant] of corpus.qrels) {
    const query = corpus.queries.get(queryId);
    if (!query) continue;
    const started = performance.now();
    const output = (await search.run({ query, mode, fusion, limit: 10 }, context())) as SearchOutput;
    latencies.push(performance.now() - started);
    scores.push(ndcgAt10(output.results.map((r) => r.source_id), relevant));
  }
  return {
    mode,
    ndcg10: scores.reduce((a, b) => a + b, 0) / Math.max(1, scores.length),
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
  };
};

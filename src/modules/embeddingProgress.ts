import type { Logger } from 'pino';
import { embeddingActivity } from '../../infra/embeddings/embeddingActivity.js';
import type { Database } from '../../infra/postgres/database.js';
import { embeddingMeter } from '../jobs/runIndexingJob.js';

const EVERY_MS = 5_000;
const count = (n: number) => n.toLocaleString('en-US');

const timeLeft = (seconds: number) =>
  seconds < 90 ? `about ${Math.max(1, Math.round(seconds))} s left` : `about ${Math.round(seconds / 60)} min left`;

/** One progress line: "embedding: 1,200 / 5,183 chunks, 42 chunks/s, about 2 min left". */
export const embeddingProgressLine = (done: number, total: number, perSecond: number): string =>
  `embedding: ${count(done)} / ${count(total)} chunks` +
  (perSecond > 0 ? `, ${count(Math.round(perSecond))} chunks/s, ${timeLeft((total - done) / perSecond)}` : '');

/**
 * Logs, every few seconds while the semantic index is behind the keyword index, how many chunks are
 * embedded, how fast, and how long the rest should take. Chunks set aside unembedded (those of
 * cancelled jobs) are not waited for. Both are chunk tables in Postgres; with
 * Meilisearch as the keyword index there is nothing to compare with, and nothing is logged.
 */
export const watchEmbeddingProgress = (db: Database, logger: Logger): (() => void) => {
  // The rate an indexing job's time left is measured at: both say the same.
  const meter = embeddingMeter(() => embeddingActivity.vectorsMade);
  /** The semantic table's rows, and the vectors made when it last grew: made since then are in a batch not yet written. */
  let stored = { rows: -1, madeBefore: 0 };
  let reported = false;
  const check = async () => {
    const [row] = await db.query<{ rows: number; total: number }>(
      `SELECT (SELECT count(*)::int FROM search_semantic) AS rows,
              (SELECT count(*)::int FROM search_keyword) - (SELECT count(*)::int FROM search_semantic_deferred) AS total`,
    );
    if (!row) return;
    const made = embeddingActivity.vectorsMade;
    meter.sample();
    if (row.rows !== stored.rows) stored = { rows: row.rows, madeBefore: made };
    const done = Math.min(row.total, row.rows + made - stored.madeBefore);
    if (row.rows < row.total) {
      logger.info(embeddingProgressLine(done, row.total, meter.perSecond()));
      reported = true;
    } else if (reported) {
      logger.info(`embedding: all ${count(row.total)} chunks embedded`);
      reported = false;
    }
  };
  const timer = setInterval(() => {
    // Before the tables exist (or with Meilisearch, which has no BM25 table) there is nothing to report.
    check().catch(() => undefined);
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
};

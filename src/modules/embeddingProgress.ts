import type { Logger } from 'pino';
import { embeddingActivity } from '../../infra/embeddings/embeddingActivity.js';
import { embeddingMeter } from '../jobs/runIndexingJob.js';
import type { EmbeddingBacklog } from '../ports/searchIndex.js';

const EVERY_MS = 5_000;
const count = (n: number) => n.toLocaleString('en-US');

const timeLeft = (seconds: number) =>
  seconds < 90 ? `about ${Math.max(1, Math.round(seconds))} s left` : `about ${Math.round(seconds / 60)} min left`;

/** One progress line: "embedding: 1,200 / 5,183 chunks, 42 chunks/s, about 2 min left". */
export const embeddingProgressLine = (done: number, total: number, perSecond: number): string =>
  `embedding: ${count(done)} / ${count(total)} chunks` +
  (perSecond > 0 ? `, ${count(Math.round(perSecond))} chunks/s, ${timeLeft((total - done) / perSecond)}` : '');

export interface EmbeddingProgressSources {
  /** Whether the semantic projection has events left to apply: cheap, read before any count. */
  behind: () => Promise<boolean>;
  backlog: () => Promise<EmbeddingBacklog>;
  /** Vectors the model has made so far in this process. */
  vectorsMade: () => number;
  log: (line: string) => void;
}

/**
 * One look at how embedding a backlog goes: while the semantic projection is behind, a line with
 * how many chunks are embedded, how fast, and how long the rest should take; once it has caught up,
 * one line saying so. The chunk tables are counted only then, never while nothing is behind (a
 * count of a large index is a scan).
 */
export const embeddingProgressCheck = ({ behind, backlog, vectorsMade, log }: EmbeddingProgressSources) => {
  // The rate an indexing job's time left is measured at: both say the same.
  const meter = embeddingMeter(vectorsMade);
  /** The semantic table's rows, and the vectors made when it last grew: made since then are in a batch not yet written. */
  let stored = { rows: -1, madeBefore: 0 };
  let reported = false;
  return async () => {
    if (!reported && !(await behind())) return;
    const row = await backlog();
    const made = vectorsMade();
    meter.sample();
    if (row.rows !== stored.rows) stored = { rows: row.rows, madeBefore: made };
    const done = Math.min(row.total, row.rows + made - stored.madeBefore);
    if (row.rows < row.total) {
      log(embeddingProgressLine(done, row.total, meter.perSecond()));
      reported = true;
    } else if (reported) {
      log(`embedding: all ${count(row.total)} chunks embedded`);
      reported = false;
    }
  };
};

/** Logs the embedding progress every few seconds (see `embeddingProgressCheck`); returns how to stop. */
export const watchEmbeddingProgress = (sources: Pick<EmbeddingProgressSources, 'behind' | 'backlog'>, logger: Logger): (() => void) => {
  const check = embeddingProgressCheck({ ...sources, vectorsMade: () => embeddingActivity.vectorsMade, log: (line) => logger.info(line) });
  const timer = setInterval(() => {
    // Before the tables exist there is nothing to report.
    check().catch(() => undefined);
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
};

import { parentPort, workerData } from 'node:worker_threads';
import type { Sql } from '../../src/ports/database.js';
import { openPglite } from './database.js';
import type { PreparedParam } from './preparedQuery.js';
import { sendError, type SentError } from './threadErrors.js';

/**
 * The embedded database's own thread: opens PGlite in the data directory it is given and answers
 * the database port's calls posted by infra/postgres/threadedPglite.ts.
 *
 * PGlite has one connection. Calls take it in turn, one at a time: a statement, or a whole
 * transaction, whose own statements run as they come while every other call waits. The next turn
 * goes to a request's call before background work's (projections and jobs writing what they
 * index), so a search waits for at most the one write in progress, not for a queue of them, and
 * keeps the connection for REQUEST_GRACE_MS after each of its calls for the next one. Once requests
 * have had it for REQUEST_SHARE_MS while background work waits, background work has the next turn,
 * so that busy clients slow indexing down but never stall it.
 */

export type DatabaseCall =
  | { op: 'query'; sql: string; params?: readonly unknown[]; tx?: number }
  | { op: 'exec'; script: string }
  | { op: 'textRows'; sql: string; params: readonly PreparedParam[] }
  | { op: 'begin' }
  | { op: 'commit' | 'rollback'; tx: number }
  | { op: 'listen'; channel: string }
  | { op: 'unlisten'; listener: number }
  | { op: 'availableExtensions' }
  | { op: 'purge'; tables: readonly string[] }
  | { op: 'close' };

export type DatabaseReply =
  | { type: 'ready' }
  | { type: 'failed'; error: SentError }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'error'; id: number; error: SentError }
  | { type: 'notify'; listener: number; payload: string };

/** Thrown inside PGlite's transaction so that it rolls back. */
const ROLLBACK = new Error('rolled back by the caller');

/** A call posted to this thread; `background` when posted by background work (see `inBackground`). */
export interface PostedCall {
  id: number;
  call: DatabaseCall;
  background: boolean;
}

const port = parentPort!;
const post = (reply: DatabaseReply) => port.postMessage(reply);

let db: Awaited<ReturnType<typeof openPglite>>;
try {
  db = await openPglite(workerData as string | undefined);
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'failed', error: sendError(error) });
  process.exit(0);
}

interface OpenTransaction {
  tx: Sql;
  end: (how: 'commit' | 'rollback') => void;
  ended: Promise<void>;
}
const transactions = new Map<number, OpenTransaction>();
let nextTransaction = 0;
const unlisteners = new Map<number, () => Promise<void>>();
let nextListener = 0;
/** Calls being answered, so that closing waits for every write in flight. */
const inFlight = new Set<Promise<unknown>>();

/** Opens a transaction and answers its id once BEGIN has run; it stays open until commit or rollback. */
const begin = () =>
  new Promise<number>((opened, failed) => {
    const id = nextTransaction++;
    let end!: (how: 'commit' | 'rollback') => void;
    const decided = new Promise<'commit' | 'rollback'>((resolve) => (end = resolve));
    const ended = db.transaction(async (tx) => {
      transactions.set(id, { tx, end, ended });
      opened(id);
      if ((await decided) === 'rollback') throw ROLLBACK;
    });
    ended.catch(failed).finally(() => transactions.delete(id));
  });

const openTransaction = (id: number): OpenTransaction => {
  const open = transactions.get(id);
  if (!open) throw new Error(`No open transaction ${id}`);
  return open;
};

const answer = async (call: DatabaseCall): Promise<unknown> => {
  switch (call.op) {
    case 'query':
      return call.tx === undefined ? db.query(call.sql, call.params) : openTransaction(call.tx).tx.query(call.sql, call.params);
    case 'exec':
      return db.exec(call.script);
    case 'textRows':
      return db.textRows!(call.sql, call.params);
    case 'begin':
      return begin();
    case 'commit': {
      const open = openTransaction(call.tx);
      open.end('commit');
      return open.ended;
    }
    case 'rollback': {
      const open = openTransaction(call.tx);
      open.end('rollback');
      return open.ended.catch((error: unknown) => {
        if (error !== ROLLBACK) throw error;
      });
    }
    case 'listen': {
      const listener = nextListener++;
      unlisteners.set(listener, await db.listen(call.channel, (payload) => post({ type: 'notify', listener, payload })));
      return listener;
    }
    case 'unlisten': {
      const unlisten = unlisteners.get(call.listener);
      unlisteners.delete(call.listener);
      return unlisten?.();
    }
    case 'availableExtensions':
      return [...(await db.availableExtensions())];
    case 'purge':
      return db.purge(call.tables);
    case 'close':
      await Promise.allSettled(inFlight);
      return db.close();
  }
};

/** Time on the connection requests may take in a row while background work waits for it. */
const REQUEST_SHARE_MS = 25;
/**
 * How long the connection stays a request's after its call: the request's next statement usually
 * follows within a millisecond or two, and would otherwise wait behind a background write.
 */
const REQUEST_GRACE_MS = 2;

interface Turn {
  background: boolean;
  /** Runs the call; settles once the connection is free again. */
  take: () => Promise<unknown>;
}
const turns: Turn[] = [];
let taken = false;

/** Time requests have had the connection since background work last had it. */
let requestTimeSinceBackground = 0;

/** The request's turn that came first, unless requests have had their share while background work waits. */
const nextTurn = (): Turn | undefined => {
  const background = turns.find((t) => t.background);
  const request = turns.find((t) => !t.background);
  const pick = request && !(background && requestTimeSinceBackground >= REQUEST_SHARE_MS) ? request : background;
  if (pick) turns.splice(turns.indexOf(pick), 1);
  return pick;
};

let requestEndedAt = Number.NEGATIVE_INFINITY;
let graceOver: NodeJS.Timeout | undefined;

const takeTurns = () => {
  if (taken || turns.length === 0) return;
  const grace = REQUEST_GRACE_MS - (performance.now() - requestEndedAt);
  if (grace > 0 && !turns.some((t) => !t.background)) {
    graceOver ??= setTimeout(() => {
      graceOver = undefined;
      takeTurns();
    }, grace);
    return;
  }
  const turn = nextTurn();
  if (!turn) return;
  taken = true;
  const startedAt = performance.now();
  void turn.take().finally(() => {
    taken = false;
    if (turn.background) requestTimeSinceBackground = 0;
    else {
      requestEndedAt = performance.now();
      requestTimeSinceBackground += requestEndedAt - startedAt;
    }
    takeTurns();
  });
};

/** Answers a call once its turn comes; a transaction keeps the turn until it ends. */
const inTurn = (background: boolean, call: DatabaseCall): Promise<unknown> =>
  new Promise((resolve, reject) => {
    turns.push({
      background,
      take: async () => {
        const answered = answer(call);
        answered.then(resolve, reject);
        const id = await answered.catch(() => undefined);
        if (call.op === 'begin' && id !== undefined) await transactions.get(id as number)?.ended.catch(() => undefined);
      },
    });
    takeTurns();
  });

/** A transaction's statements and its end run in its turn, at once; every other call waits for one. */
const ownsTurn = (call: DatabaseCall) =>
  (call.op === 'query' && call.tx !== undefined) || call.op === 'commit' || call.op === 'rollback' || call.op === 'close';

port.on('message', ({ id, call, background }: PostedCall) => {
  const work = (ownsTurn(call) ? answer(call) : inTurn(background, call)).then(
    (result) => post({ type: 'result', id, result }),
    (error: unknown) => post({ type: 'error', id, error: sendError(error) }),
  );
  if (call.op === 'close') return void work.finally(() => process.exit(0));
  inFlight.add(work);
  void work.finally(() => inFlight.delete(work));
});

import { userInfo } from 'node:os';
import { newId } from '../domain/ids.js';
import type { Actor } from '../domain/metadata.js';
import type { Ledger } from '../main.js';
import type { LedgerHandle } from '../module.js';
import { callOperation, DEFAULT_PROJECT } from '../operations.js';

/** A one-shot command waits this long at most for the read models (embedding a large tree takes a while). */
const CATCH_UP_TIMEOUT_MS = 60 * 60_000;

/** The operator at the terminal: no tenant, every project. */
const cliActor = (): Actor => ({ subject: userInfo().username || 'cli', tenant: null, via: 'cli' });

/** Operations run in this process, on an opened ledger whose projections run as a server's do. */
export const localLedger = (ledger: Ledger): LedgerHandle => ({
  server: null,
  run: async <T>(name: string, input: unknown, extra: object = {}) =>
    (await callOperation(ledger.operation(name), input, {
      actor: cliActor(),
      correlationId: newId(),
      project: DEFAULT_PROJECT,
      ...extra,
    })) as T,
  catchUp: async (projection) =>
    ledger.projections.waitFor(await ledger.store.headPosition(), {
      ...(projection ? { name: projection } : {}),
      timeoutMs: CATCH_UP_TIMEOUT_MS,
    }),
  startWork: () => ledger.start(),
});

import { userInfo } from 'node:os';
import { newId } from '../domain/ids.js';
import type { Actor } from '../domain/metadata.js';
import { ProjectionLagError } from '../engine/projectionRunner.js';
import type { Ledger } from '../main.js';
import type { LedgerHandle } from '../module.js';
import { callOperation } from '../operations.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';

/** A one-shot command waits this long at most for the read models (embedding a large tree takes a while). */
const CATCH_UP_TIMEOUT_MS = 60 * 60_000;
/** How often a catch-up says what it is still waiting for. */
const WAITING_REPORT_MS = 1_000;

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
  catchUp: async (names, onWaiting) => {
    const head = await ledger.store.headPosition();
    const deadline = Date.now() + CATCH_UP_TIMEOUT_MS;
    // Waits a little at a time, saying between waits which read model is behind and by how much.
    for (;;) {
      const timeoutMs = Math.min(WAITING_REPORT_MS, Math.max(0, deadline - Date.now()));
      try {
        return await ledger.projections.waitFor(head, { name: names, timeoutMs });
      } catch (error) {
        if (!(error instanceof ProjectionLagError) || Date.now() >= deadline) throw error;
        const behind = await ledger.projections.behind(head, names);
        if (behind) onWaiting?.({ projection: behind.name, events: behind.events });
      }
    }
  },
  startWork: () => ledger.start(),
});

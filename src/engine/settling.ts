import type { Position } from '../domain/position.js';
import type { Settling } from '../domain/settling.js';
import { UnavailableError } from '../errors.js';
import { ProjectionLagError } from './projectionRunner.js';

/** How long a write's answer waits for the read models it reads before it answers that it is still settling. */
export const WRITE_SETTLE_MS = 10_000;

/**
 * Read-your-writes within a bound: waits for the read models an answer reads. Past the bound (or
 * while one cannot write), the write is stored all the same, and the answer says so rather than failing.
 */
export const settle = async (wait: Promise<void>, position: Position): Promise<Settling | null> => {
  try {
    await wait;
    return null;
  } catch (error) {
    if (error instanceof ProjectionLagError || error instanceof UnavailableError) {
      const why =
        error instanceof ProjectionLagError
          ? `the '${error.projection}' read model has yet to apply it`
          : `a read model cannot apply it yet (${error.message})`;
      return { position, message: `Accepted at ledger position ${position}; ${why}, so a read may not show it yet` };
    }
    throw error;
  }
};

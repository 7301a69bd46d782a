import { expect, it } from 'vitest';
import type { ApiServer } from '../api/apiServer.js';
import type { StoredEvent } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';

export interface JobView {
  job_id: string;
  status: string;
  progress_message: string;
  error_message?: string;
  error_type?: string;
}

/**
 * The operator setting that lets connectors reach the stand-ins on loopback: without it they reach
 * only their services' public hosts.
 */
export const LOOPBACK_SERVICES: NodeJS.ProcessEnv = {
  CTX_CONNECTORS__ALLOWED_HOSTS: '127.0.0.1',
  CTX_CONNECTORS__ALLOW_PRIVATE_ADDRESSES: 'true',
};

/** Follows a job through the the job tools status operation until it ends. */
export const jobOutcome = async (api: ApiServer, jobId: string, tenant = 'acme'): Promise<JobView> => {
  const context = { actor: { subject: 'test', tenant, via: 'cli' as const }, correlationId: crypto.randomUUID(), project: tenant };
  for (;;) {
    const status = (await api.ledger.operation('get_job_status').run({ job_id: jobId }, context)) as unknown as JobView;
    if (['completed', 'failed', 'cancelled'].includes(status.status)) {
      await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 30_000 });
      return status;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** Starts a sync through the REST route and answers its job id. */
export const startSync = async (api: ApiServer, token: string, connectorId: string): Promise<string> => {
  const started = await api.call('POST', `/connectors/${connectorId}/sync`, { token });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return started.body.job_id as string;
};

/** Every event appended after `from`, of the given stream category. */
export const eventsSince = async (api: ApiServer, from: Position | undefined, category: string): Promise<StoredEvent[]> => {
  return api.ledger.store.readAll({ ...(from ? { from } : {}), maxCount: 100_000, filter: { categories: [category] } });
};

/**
 * A test against the real service, run only when its credentials are in the environment; otherwise
 * skipped with a line saying which variables it needs (never required, even in CI).
 */
export const itWithService = (variables: readonly string[], title: string, fn: () => Promise<void>, timeoutMs = 120_000) => {
  const missing = variables.filter((name) => !process.env[name]);
  if (missing.length === 0) {
    it(title, fn, timeoutMs);
    return;
  }
  console.warn(`${title} — skipped: set ${missing.join(' and ')} to run it against the real service`);
  it.skip(`${title} (skipped: set ${missing.join(' and ')})`, () => undefined);
};

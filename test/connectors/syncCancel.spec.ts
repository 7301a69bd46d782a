import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { streamId } from '../../src/domain/events.js';
import { openLedger } from '../../src/main.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { startGitHubStandIn, type GitHubStandIn } from './githubStandIn.js';
import { jobOutcome, LOOPBACK_SERVICES, startSync } from './syncSupport.js';

describe('a connector sync stopped while its remote service keeps it waiting', () => {
  let api: ApiServer;
  const dataDir = tempDataDir('ctx-sync-cancel-');
  let github: GitHubStandIn;
  let token: string;
  let connectorId: string;
  const releases: (() => void)[] = [];

  beforeAll(async () => {
    github = await startGitHubStandIn('acme/widgets');
    github.issues.set(1, {
      number: 1,
      title: 'Issue 1',
      body: 'Body of issue 1',
      user: 'octocat',
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-02-01T10:00:00Z',
    });
    api = await startApiServer(LOOPBACK_SERVICES, undefined, dataDir);
    token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: {
        type: 'github',
        name: 'Widgets',
        config: { repository: 'acme/widgets', include_issues: true, include_prs: true, token: 'ghp_valid', api_url: github.url },
      },
    });
    expect(added.status).toBe(201);
    connectorId = added.body.id as string;
  }, 60_000);
  afterAll(async () => {
    releases.forEach((release) => release());
    await api?.close();
    await github?.close();
  });

  it('ends cancelled through POST /index/stop, and the connector can sync again at once', async () => {
    const held = github.hold((r) => r.path.endsWith('/issues'));
    releases.push(() => held.release());
    const jobId = await startSync(api, token, connectorId);
    await held.arrived;

    const stopped = await api.call('POST', '/index/stop', { token });
    expect(stopped.status).toBe(200);
    expect(stopped.body.job_ids).toEqual([jobId]);
    expect((await jobOutcome(api, jobId)).status).toBe('cancelled');

    const again = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, again)).status).toBe('completed');
  }, 60_000);

  it('ends cancelled, not failed, when its cancel was recorded while no process ran it', async () => {
    const held = github.hold((r) => r.path.endsWith('/issues'));
    releases.push(() => held.release());
    const jobId = await startSync(api, token, connectorId);
    await held.arrived;
    // The process stops while the sync waits on the service: the job is left unfinished, to be resumed.
    await api.close();

    // Its cancel is recorded while nothing runs it (as when the process that ran it died after the request).
    const idle = await openLedger(
      loadConfig({ env: { CTX_STORAGE__DATA_DIR: dataDir, CTX_EMBEDDINGS__PROVIDER: 'none', ...tempRootsEnv(), ...LOOPBACK_SERVICES } }),
      { logger: pino({ level: 'silent' }) },
    );
    const context = { actor: { subject: 'test', tenant: 'acme', via: 'cli' as const }, correlationId: crypto.randomUUID(), project: 'acme' };
    expect(await idle.operation('cancel_job').run({ job_id: jobId }, context)).toMatchObject({ status: 'cancelling' });
    await idle.close();
    held.release();

    api = await startApiServer(LOOPBACK_SERVICES, undefined, dataDir);
    expect((await jobOutcome(api, jobId)).status).toBe('cancelled');
    const types = (await api.ledger.store.readStream(streamId('job', jobId))).map((e) => e.type);
    expect(types).not.toContain('IndexingJobFailed');
    expect(types.at(-1)).toBe('IndexingJobCancelled');
  }, 90_000);
});

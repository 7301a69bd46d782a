import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger } from '../../src/main.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { runCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { startGitHubStandIn, type GitHubStandIn } from './githubStandIn.js';
import { LOOPBACK_SERVICES } from './syncSupport.js';

describe('ctx sync with a GitHub connector', () => {
  let github: GitHubStandIn;
  const dataDir = tempDataDir('ctx-sync-');
  const env = { CTX_STORAGE__DATA_DIR: dataDir, CTX_EMBEDDINGS__PROVIDER: 'none', CTX_LOG__LEVEL: 'silent', ...tempRootsEnv(), ...LOOPBACK_SERVICES };

  beforeAll(async () => {
    github = await startGitHubStandIn('acme/widgets');
    github.issues.set(7, {
      number: 7,
      title: 'Cache stampede on deploy',
      body: 'The cache warms too slowly.',
      user: 'octocat',
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-02T00:00:00Z',
    });
    const ledger = await openLedger(loadConfig({ env }), { logger: pino({ level: 'silent' }) });
    await ledger.projections.start();
    const add = ledger.operation('context.connector_management');
    const context = { actor: { subject: 'test', tenant: null, via: 'cli' as const }, correlationId: crypto.randomUUID(), project: DEFAULT_PROJECT };
    await add.run(
      { action: 'add', connector_config: { type: 'github', name: 'Widgets', config: { repository: 'acme/widgets', token: 'ghp_valid', api_url: github.url } } },
      context,
    );
    await add.run({ action: 'add', connector_config: { type: 'github', name: 'Unset', config: {} } }, context);
    await ledger.close();
  }, 60_000);
  afterAll(() => github?.close());

  it('runs the sync here and prints how it ended', async () => {
    const { code, stdout, stderr } = await runCtx(['sync', 'Widgets', '--json'], env);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'completed' });
    expect(github.requests.some((r) => r.path === '/repos/acme/widgets/issues')).toBe(true);

    const search = await runCtx(['search', 'cache stampede', '--json'], env);
    expect(search.stdout).toContain('issues/7');
  }, 60_000);

  it('exits 2 naming the missing setting', async () => {
    const { code, stderr } = await runCtx(['sync', 'Unset'], env);
    expect(code).toBe(2);
    expect(stderr).toContain("needs the 'repository' setting");
  }, 60_000);
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/main.js';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { openTestLedger } from '../support/ledger.js';

const context = (): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com' },
  });

describe('configured sources', () => {
  let ledger: Ledger;
  let repo: string;

  beforeAll(async () => {
    repo = mkdtempSync(path.join(tmpdir(), 'ctx-git-'));
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(repo, 'README.md'), '# Platform\n\nDeploys run through the release train every Tuesday.\n');
    writeFileSync(path.join(repo, 'deploy.py'), 'def deploy(service):\n    """Roll out a service."""\n    return service\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'first');
    const config = path.join(mkdtempSync(path.join(tmpdir(), 'ctx-config-')), 'ctx.toml');
    writeFileSync(
      config,
      `[sources.platform]\nkind = "git"\nrepository = ${JSON.stringify(repo)}\nurl_template = "https://git.example.com/platform/blob/{commit}/{path}"\n` +
        `[sources.missing]\nkind = "filesystem"\nroots = ["/nonexistent/handbook"]\n`,
    );
    ledger = await openTestLedger({}, config);
    await ledger.start();
  }, 120_000);
  afterAll(async () => ledger.close());

  const run = (name: string, input: Record<string, unknown>) => ledger.operation(name).run(input, context());

  it('ingests a git source at HEAD with authors and links, then reports it healthy with its count', async () => {
    const tally = await run('documents.ingest', { source: 'git:platform' });
    expect(tally).toMatchObject({ created: 2, failed: 0, removed: 0 });
    const { sources } = (await run('sources', {})) as { sources: { name: string }[] };
    expect(sources).toContainEqual({ name: 'git:platform', configured: true, healthy: true, notes: null, doc_count: 2 });
    expect(sources).toContainEqual(
      expect.objectContaining({ name: 'filesystem:missing', configured: true, healthy: false, doc_count: 0 }),
    );
    const { results } = (await run('search', { query: 'release train' })) as { results: { id: string; source_url: string }[] };
    expect(results[0]?.source_url).toMatch(/^https:\/\/git\.example\.com\/platform\/blob\/[0-9a-f]{40}\/README\.md$/);
    const doc = (await run('get', { id: results[0]!.id })) as { author: string };
    expect(doc.author).toBe('Ada');
  });

  it('removes the documents of files deleted from the source, and skips unchanged ones', async () => {
    rmSync(path.join(repo, 'deploy.py'));
    git(repo, 'commit', '-q', '-am', 'drop deploy');
    const tally = await run('documents.ingest', { source: 'git:platform' });
    expect(tally).toMatchObject({ created: 0, unchanged: 1, removed: 1 });
    const { results } = (await run('search', { query: 'deploy service' })) as { results: { source_id: string }[] };
    expect(results.map((r) => r.source_id)).not.toContain('deploy.py');
  });

  it('names the configured sources when asked for an unknown one', async () => {
    await expect(run('documents.ingest', { source: 'git:nope' })).rejects.toThrow(/No configured source 'git:nope'/);
  });
});

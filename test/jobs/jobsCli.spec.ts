import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';

const KEYWORD_ONLY = { CTX_EMBEDDINGS__PROVIDER: 'none' };

describe('ctx index and ctx jobs', () => {
  it('indexes a folder with --follow, then lists, shows and replays the job', async () => {
    const repo = mkdtempSync(path.join(tmpdir(), 'ctx-index-'));
    mkdirSync(path.join(repo, 'docs'));
    writeFileSync(path.join(repo, 'docs/guide.md'), '# Guide\n\nThe ledger keeps every change as an event.\n');
    writeFileSync(path.join(repo, 'main.py'), 'def main():\n    return 0\n');
    const dataDir = tempDataDir();

    const indexed = await runCtx(['index', repo, '--follow', '--json', '--data-dir', dataDir], { ...KEYWORD_ONLY, ...tempRootsEnv() });
    expect(indexed.code, indexed.stderr).toBe(0);
    const final = JSON.parse(indexed.stdout.slice(indexed.stdout.lastIndexOf('{\n'))) as Record<string, unknown>;
    expect(final).toMatchObject({ status: 'completed', files_indexed: 2, progress_percentage: 100 });
    const jobId = final.job_id as string;

    const listed = await runCtx(['jobs', '--status', 'completed', '--json', '--data-dir', dataDir], KEYWORD_ONLY);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total_count: 1, jobs: [expect.objectContaining({ job_id: jobId })] });

    const shown = await runCtx(['jobs', 'show', jobId, '--json', '--data-dir', dataDir], KEYWORD_ONLY);
    expect(JSON.parse(shown.stdout)).toMatchObject({ job_id: jobId, status: 'completed' });

    const history = await runCtx(['jobs', 'history', jobId, '--data-dir', dataDir], KEYWORD_ONLY);
    expect(history.code).toBe(0);
    expect(history.stdout).toContain('IndexingJobRequested');
    expect(history.stdout).toContain('IndexingJobCompleted');

    const cancelled = await runCtx(['jobs', 'cancel', jobId, '--data-dir', dataDir], KEYWORD_ONLY);
    expect(cancelled.code).not.toBe(0);
    expect(cancelled.stderr).toContain("Cannot cancel job in status 'completed'");

    const searched = await runCtx(['search', 'every change as an event', '--json', '--data-dir', dataDir], KEYWORD_ONLY);
    expect(JSON.parse(searched.stdout)).toMatchObject({ results: [expect.objectContaining({ title: 'guide.md' })] });
  }, 180_000);

  it('resolves a path from the working directory and says when it does not exist', async () => {
    const result = await runCtx(['index', 'no/such/folder', '--data-dir', tempDataDir()], KEYWORD_ONLY);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Repository path does not exist: .*no\/such\/folder/);
  });
});

import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

const KEYWORD_ONLY = { CTX_EMBEDDINGS__PROVIDER: 'none' };

// `ctx` runs from the project folder, which is what ingestion may read unless ingest.roots says otherwise.
describe('ctx ingest and ctx index read only inside ingest.roots', () => {
  const repo = tempDataDir('ctx-roots-repo-');
  writeFileSync(path.join(repo, 'notes.md'), '# Notes\n');

  it('refuses paths outside them with exit code 2 and appends nothing', async () => {
    const dataDir = tempDataDir();
    for (const args of [
      ['ingest', '/etc/passwd'],
      ['ingest', '../outside'],
      ['index', repo],
    ]) {
      const refused = await runCtx([...args, '--data-dir', dataDir], KEYWORD_ONLY);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(/outside the folders ingestion may read \(setting ingest\.roots\)/);
    }
    const history = await runCtx(['history', '--json', '--data-dir', dataDir], KEYWORD_ONLY);
    expect(JSON.parse(history.stdout)).toEqual({ events: [], next_cursor: null });
  }, 300_000);

  it('ingests a folder of the working directory, as the quick tour does', async () => {
    const ingested = await runCtx(['ingest', './docs', '--data-dir', tempDataDir()], KEYWORD_ONLY);
    expect(ingested.code, ingested.stderr).toBe(0);
    const files = readdirSync(path.resolve(import.meta.dirname, '../../docs')).length;
    expect(ingested.stdout).toMatch(new RegExp(`^${files} files: ${files} new`));
  }, 180_000);

  it('reads a folder once ingest.roots names it', async () => {
    const indexed = await runCtx(['index', repo, '--json', '--data-dir', tempDataDir()], {
      ...KEYWORD_ONLY,
      CTX_INGEST__ROOTS: repo,
    });
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(JSON.parse(indexed.stdout)).toMatchObject({ job_id: expect.any(String) as unknown });
  }, 180_000);
});

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
    // Inside them, a pipe named on its own is not a file to read: opening it would wait for a writer.
    const pipe = path.join(tempDataDir('ctx-roots-pipe-'), 'notes.md');
    execFileSync('mkfifo', [pipe]);
    const named = await runCtx(['ingest', pipe, '--data-dir', dataDir], { ...KEYWORD_ONLY, CTX_INGEST__ROOTS: path.dirname(pipe) });
    expect(named.code).toBe(2);
    expect(named.stderr).toContain(`Path '${pipe}' is neither a file nor a folder: a pipe, socket or device is not read`);
    const history = await runCtx(['history', '--json', '--data-dir', dataDir], KEYWORD_ONLY);
    expect(JSON.parse(history.stdout)).toEqual({ events: [], next_cursor: null });
  }, 300_000);

  it('never reads its data directory or configuration in the folder it ingests: its keys stay out of the index and out of git', async () => {
    const project = tempDataDir('ctx-own-data-');
    writeFileSync(path.join(project, 'notes.md'), '# Notes\n');
    execFileSync('git', ['init', '-q'], { cwd: project });
    // Its configuration, where a team may keep auth.jwt_secret, is not read either.
    expect((await runCtx(['init'], {}, { cwd: project })).code).toBe(0);
    // The default data directory, ./.ctx, is made by the first run; the second finds its key there.
    for (const run of ['first', 'second']) {
      const ingested = await runCtx(['ingest', '.'], KEYWORD_ONLY, { cwd: project });
      expect(ingested.code, `${run}: ${ingested.stderr}`).toBe(0);
      expect(ingested.stdout, run).toMatch(/^3 files: (1 new, 0 updated, 0 unchanged|0 new, 0 updated, 1 unchanged), 2 skipped/);
      expect(ingested.stdout, run).toContain('.ctx: excluded: a Context Ledger data directory (its database and keys)');
      expect(ingested.stdout, run).toContain('ctx.toml: excluded: a Context Ledger configuration file (it may hold keys)');
    }
    const key = readFileSync(path.join(project, '.ctx', 'secrets.key'), 'utf8');
    const found = await runCtx(['search', key, '--mode', 'keyword', '--json'], KEYWORD_ONLY, { cwd: project });
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout)).toMatchObject({ results: [] });
    const untracked = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: project, encoding: 'utf8' });
    expect(untracked.split('\n').filter(Boolean)).toEqual(['?? ctx.toml', '?? notes.md']);
  }, 180_000);

  it('ingests a folder of the working directory, as the quick tour does', async () => {
    const ingested = await runCtx(['ingest', './docs', '--data-dir', tempDataDir()], KEYWORD_ONLY);
    expect(ingested.code, ingested.stderr).toBe(0);
    const files = readdirSync(path.resolve(import.meta.dirname, '../../docs')).length;
    expect(ingested.stdout).toMatch(new RegExp(`^${files} files: ${files} new`));
  }, 180_000);

  it('says how to allow a folder, and each way it names works', async () => {
    const refused = await runCtx(['ingest', repo, '--data-dir', tempDataDir()], KEYWORD_ONLY);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`Path '${repo}' is outside the folders ingestion may read (setting ingest.roots).`);
    expect(refused.stderr).toContain(`add '${repo}' (or a folder above it) to roots under [ingest] in ctx.toml`);
    expect(refused.stderr).toContain('set CTX_INGEST__ROOTS to the folders, comma-separated');
    expect(refused.stderr).toContain('run ctx from a folder that holds it');

    // ctx init writes the [ingest] section, commented: uncommented with the folder, it allows it.
    const project = tempDataDir('ctx-roots-project-');
    expect((await runCtx(['init'], {}, { cwd: project })).code).toBe(0);
    const file = path.join(project, 'ctx.toml');
    const template = readFileSync(file, 'utf8');
    const commented = /^(\[ingest\]\n(?:#.*\n)*?)# roots = .*$/m;
    expect(template).toMatch(commented);
    writeFileSync(file, template.replace(commented, `$1roots = [".", ${JSON.stringify(repo)}]`));
    const configured = await runCtx(['ingest', repo, '--data-dir', tempDataDir()], KEYWORD_ONLY, { cwd: project });
    expect(configured.code, configured.stderr).toBe(0);

    const fromEnvironment = await runCtx(['ingest', repo, '--data-dir', tempDataDir()], { ...KEYWORD_ONLY, CTX_INGEST__ROOTS: `.,${repo}` });
    expect(fromEnvironment.code, fromEnvironment.stderr).toBe(0);
    const fromTheFolder = await runCtx(['ingest', '.', '--data-dir', tempDataDir()], KEYWORD_ONLY, { cwd: repo });
    expect(fromTheFolder.code, fromTheFolder.stderr).toBe(0);
  }, 300_000);

  it('reads a folder once ingest.roots names it', async () => {
    const indexed = await runCtx(['index', repo, '--json', '--data-dir', tempDataDir()], {
      ...KEYWORD_ONLY,
      CTX_INGEST__ROOTS: repo,
    });
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(JSON.parse(indexed.stdout)).toMatchObject({ job_id: expect.any(String) as unknown });
  }, 180_000);
});

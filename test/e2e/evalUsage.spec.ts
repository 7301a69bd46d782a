import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/ledger.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/eval/fixtures');

const evalRun = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    execFile('npx', ['tsx', 'eval/run.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    ),
  );

describe('npm run eval', () => {
  it('names the missing files of a folder that holds no BEIR dataset, exiting 2 without a stack', async () => {
    const dir = tempDataDir();
    const { code, stderr } = await evalRun(['beir', dir]);
    expect(code).toBe(2);
    expect(stderr).toContain(`${dir} holds no dataset in the BEIR layout (missing corpus.jsonl, queries.jsonl, qrels/test.tsv)`);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('runs every corpus of a data folder into one table, saves per-query scores, and compares two runs', async () => {
    const cache = tempDataDir('ctx-eval-');
    const env = { CTX_EMBEDDINGS__PROVIDER: 'none', CTX_EVAL_CACHE: cache };
    const first = await evalRun(['--all', '--data-dir', FIXTURES, '--out', path.join(cache, 'a.json')], env);
    expect(first.stderr).toContain('tiny-beir: 6 of 6 documents, 3 of 3 test queries (seed 1)');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^corpus\s+documents\s+queries\s+keyword\s+semantic\s+hybrid/m);
    expect(first.stdout).toMatch(/^tiny-beir\s+6\/6\s+3\/3\s+\d\.\d{4}\s+—/m);
    const saved = JSON.parse(readFileSync(path.join(cache, 'a.json'), 'utf8')) as {
      corpora: { corpus: string; scores: { keyword: Record<string, number> } }[];
    };
    expect(saved.corpora.map((c) => c.corpus)).toEqual(['tiny-beir']);
    expect(Object.keys(saved.corpora[0]!.scores.keyword).sort()).toEqual(['q1', 'q2', 'q3']);
    // The sample's ledger is kept for the next run.
    expect(existsSync(path.join(cache, 'ledgers', 'tiny-beir-q200-d2500-s1-q8'))).toBe(true);

    const second = await evalRun(['tiny-beir', '--data-dir', FIXTURES, '--out', path.join(cache, 'b.json')], env);
    expect(second.code).toBe(0);
    const compared = await evalRun(['--compare', path.join(cache, 'a.json'), path.join(cache, 'b.json')]);
    expect(compared.code).toBe(0);
    expect(compared.stdout).toMatch(/^tiny-beir\s+keyword\s+(\d\.\d{4})\s+\1\s+\+0\.0000 ±0\.0000 ≈$/m);
  }, 240_000);
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/ledger.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('npm run eval', () => {
  it('names the missing files of a folder that holds no BEIR dataset, exiting 2 without a stack', async () => {
    const dir = tempDataDir();
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile('npx', ['tsx', 'eval/run.ts', 'beir', dir], { cwd: ROOT }, (error, _stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stderr }),
      ),
    );
    expect(code).toBe(2);
    expect(stderr).toContain(`${dir} holds no dataset in the BEIR layout (missing corpus.jsonl, queries.jsonl, qrels/test.tsv)`);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});

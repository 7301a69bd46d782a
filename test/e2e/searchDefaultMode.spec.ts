import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { runCtx } from '../support/cli.js';
import { modelEnv, tempDataDir } from '../support/ledger.js';
import { describeWith, EMBEDDING_MODEL } from '../support/requirements.js';

describeWith(EMBEDDING_MODEL, 'ctx search without --mode, with an embedding model', () => {
  it('ranks hybrid: a query sharing no word with the document still finds it by meaning', async () => {
    const cwd = tempDataDir('ctx-default-mode-');
    mkdirSync(path.join(cwd, 'docs'));
    writeFileSync(path.join(cwd, 'docs/garage.md'), 'Change the engine oil of the car every ten thousand kilometres.\n');
    const env = modelEnv();
    const ingested = await runCtx(['ingest', './docs'], env, { cwd });
    expect(ingested.code, ingested.stderr).toBe(0);

    const searched = await runCtx(['search', 'automobile', 'maintenance', '--explain', '--json'], env, { cwd });
    expect(searched.code, searched.stderr).toBe(0);
    const { results } = JSON.parse(searched.stdout) as { results: { source_id: string; explain: { semantic: unknown } }[] };
    expect(results.map((r) => r.source_id)).toEqual(['docs/garage.md']);
    expect(results[0]!.explain.semantic).not.toBeNull();
  }, 180_000);
});

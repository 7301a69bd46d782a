import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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
    const { results, mode } = JSON.parse(searched.stdout) as {
      results: { source_id: string; explain: { semantic: unknown } }[];
      mode: string;
    };
    expect(mode).toBe('hybrid');
    expect(results.map((r) => r.source_id)).toEqual(['docs/garage.md']);
    expect(results[0]!.explain.semantic).not.toBeNull();
  }, 180_000);
});

describe('ctx search without --mode or an embedding model', () => {
  const noModel = { CTX_EMBEDDINGS__MODEL_DIR: path.join(tempDataDir('ctx-no-model-'), 'models') };

  it('says that keyword search ran, and why, in the text and in --json, without warning on other commands', async () => {
    const cwd = tempDataDir('ctx-default-mode-');
    mkdirSync(path.join(cwd, 'docs'));
    writeFileSync(path.join(cwd, 'docs/garage.md'), 'Change the engine oil of the car every ten thousand kilometres.\n');
    const ingested = await runCtx(['ingest', './docs'], noModel, { cwd });
    expect(ingested.code, ingested.stderr).toBe(0);

    const text = await runCtx(['search', 'engine', 'oil'], noModel, { cwd });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('docs/garage.md');
    expect(text.stdout).toContain(
      '(No embedding model is loaded: keyword search only; `ctx model fetch` adds semantic and hybrid search)',
    );
    const json = await runCtx(['search', 'engine', 'oil', '--json'], noModel, { cwd });
    expect(JSON.parse(json.stdout)).toMatchObject({ mode: 'keyword', mode_notice: 'No embedding model is loaded: keyword search only' });

    const sources = await runCtx(['sources'], noModel, { cwd });
    expect(sources.code, sources.stderr).toBe(0);
    expect(sources.stderr).not.toContain('semantic search is off');
  }, 180_000);

  it('says where to go from an empty index', async () => {
    const searched = await runCtx(['search', 'anything', '--data-dir', path.join(tempDataDir(), 'd')], noModel);
    expect(searched.code, searched.stderr).toBe(0);
    expect(searched.stdout).toContain('No results. `ctx sources` lists what is indexed; `ctx ingest PATH` adds files and folders.');
  }, 180_000);
});

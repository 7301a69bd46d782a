import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { SearchOutput } from '../../queries/search/searchDocuments.js';
import { loadConfig } from '../../src/config.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { tempDataDir } from '../support/ledger.js';
import { EMBEDDING_MODEL, itWith, testModelDir } from '../support/requirements.js';

const context = (): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

const DOCUMENTS = [
  {
    source_id: 'garage.md',
    title: 'Garage',
    body: 'Change the engine oil of the car every ten thousand kilometres.',
  },
  {
    source_id: 'kitchen.md',
    title: 'Kitchen',
    body: 'Bake the bread at two hundred degrees for forty minutes.',
  },
];

/** A ledger whose model folder is empty, and the lines it logs. */
const openWithoutModel = async () => {
  const modelDir = tempDataDir('ctx-models-');
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const config = loadConfig({
    env: { CTX_EMBEDDINGS__PROVIDER: 'local', CTX_EMBEDDINGS__MODEL_DIR: modelDir },
    overrides: { storage: { dataDir: tempDataDir() } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'info' }, sink) });
  const messages = () => lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
  return { ledger, modelDir, messages };
};

const search = (ledger: Ledger, mode: string, query: string) =>
  ledger.operation('search').run({ query, mode }, context()) as Promise<SearchOutput>;

let ledger: Ledger | undefined;
afterEach(async () => {
  await ledger?.close();
  ledger = undefined;
});

describe('semantic search while the embedding model is missing', () => {
  it('says why and what to do, and keyword search goes on working', async () => {
    const opened = await openWithoutModel();
    ledger = opened.ledger;
    await ledger.start();
    const folder = path.join(opened.modelDir, 'Xenova', 'bge-small-en-v1.5');
    const fix =
      'run `ctx model fetch`, or set embeddings.model_dir / CTX_EMBEDDINGS__MODEL_DIR, or embeddings.provider = "none"';

    expect(opened.messages()).toContain(
      `semantic search is off: embedding model 'Xenova/bge-small-en-v1.5' could not be loaded (no model files in ${folder}); ${fix}`,
    );
    expect(opened.messages()).toContain(
      'embedder: none: keyword search only — run `ctx model fetch` for semantic search',
    );

    await ledger
      .operation('documents.ingest_batch')
      .run({ source: 'notes', documents: DOCUMENTS }, context());
    for (const mode of ['semantic', 'hybrid']) {
      const error = await search(ledger, mode, 'motor maintenance').catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'EMBEDDINGS_DISABLED' });
      expect((error as Error).message).toBe(
        `Semantic and hybrid search need embeddings: embedding model 'Xenova/bge-small-en-v1.5' could not be loaded ` +
          `(no model files in ${folder}); ${fix}`,
      );
    }
    const { results } = await search(ledger, 'keyword', 'engine oil');
    expect(results.map((r) => r.source_id)).toEqual(['garage.md']);
  });

  itWith(
    EMBEDDING_MODEL,
    'starts using the model once it is put in place, embedding what was ingested before, without a restart',
    async () => {
      const opened = await openWithoutModel();
      ledger = opened.ledger;
      await ledger.start();
      await ledger
        .operation('documents.ingest_batch')
        .run({ source: 'notes', documents: DOCUMENTS }, context());
      await expect(search(ledger, 'semantic', 'motor maintenance')).rejects.toMatchObject({
        code: 'EMBEDDINGS_DISABLED',
      });

      // What `ctx model fetch` does, in one step: the model folder appears.
      mkdirSync(path.join(opened.modelDir, 'Xenova'));
      symlinkSync(
        path.join(testModelDir!, 'Xenova', 'bge-small-en-v1.5'),
        path.join(opened.modelDir, 'Xenova', 'bge-small-en-v1.5'),
      );

      await search(ledger, 'semantic', 'motor maintenance');
      expect((await ledger.projections.status()).map((p) => p.name)).toContain('semantic');
      await ledger.catchUp();
      const { results } = await search(ledger, 'semantic', 'motor maintenance');
      expect(results[0]?.source_id).toBe('garage.md');
      expect(opened.messages()).toContainEqual(
        expect.stringMatching(/^semantic search is on: Xenova\/bge-small-en-v1\.5 \(fp32 weights, 384-d\)/),
      );
    },
    120_000,
  );
});

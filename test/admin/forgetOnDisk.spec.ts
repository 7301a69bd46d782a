import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentIdOf } from '../../src/domain/documents.js';
import { backupDataDir } from '../../infra/postgres/backup.js';
import { loadConfig } from '../../src/config.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { tempDataDir } from '../support/ledger.js';

const ENV = { CTX_EMBEDDINGS__PROVIDER: 'none', CTX_LOG__LEVEL: 'silent' };

/** A word found nowhere else; lower case, as the keyword index keeps its terms. */
const marker = (name: string) => `${name}${Date.now()}${randomInt(1e9)}7`;
const SECRET = marker('forgottenmarker');
const SHARED = marker('sharedmarker');
const OTHER = marker('othermarker');

const SHARED_SECTION = `# Harbour\n\nThe ${SHARED} harbour shelters the fishing fleet when the northern storms arrive.\n`;
const SECRET_BODY =
  `# Vault\n\nThe ${SECRET} vault keeper counts the ledgers every morning before dawn.\n\n` +
  `# Cellar\n\nBelow the vault, ${SECRET} barrels of cider age beside the wine.\n\n` +
  SHARED_SECTION;
const OTHER_BODY = `# Lighthouse\n\nThe ${OTHER} lighthouse keeper logs every passing ship.\n`;

const open = (dataDir: string) =>
  openLedger(loadConfig({ env: ENV, overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } } }), {
    logger: pino({ level: 'silent' }),
  });

const as = (subject: string) => ({
  actor: { subject, tenant: null, via: 'cli' as const },
  project: DEFAULT_PROJECT,
  correlationId: crypto.randomUUID(),
});
const run = <T = Record<string, unknown>>(ledger: Ledger, name: string, input: object, subject = 'dpo') =>
  ledger.operation(name).run(input as never, as(subject)) as Promise<T>;

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? files(file) : [file];
  });

/** The files under `dir` that hold `text` byte for byte, as `grep -rla` finds them. */
const holding = (dir: string, text: string) =>
  files(dir)
    .filter((file) => readFileSync(file).includes(text))
    .map((file) => path.relative(dir, file));

describe('forgotten content leaves the data directory', () => {
  const dataDir = tempDataDir('ctx-forget-disk-');
  const backup = path.join(tempDataDir('ctx-forget-backup-'), 'after.ctxbak');
  const secret = documentIdOf(DEFAULT_PROJECT, 'notes', 'vault.md');
  const harbour = documentIdOf(DEFAULT_PROJECT, 'notes', 'harbour.md');
  const lighthouse = documentIdOf(DEFAULT_PROJECT, 'notes', 'lighthouse.md');
  let ledger: Ledger;
  let wrappedKey: string;

  beforeAll(async () => {
    ledger = await open(dataDir);
    await ledger.start();
    await run(ledger, 'documents.ingest_batch', {
      source: 'notes',
      documents: [
        { source_id: 'vault.md', title: 'Vault', body: SECRET_BODY },
        { source_id: 'harbour.md', title: 'Harbour', body: SHARED_SECTION },
        { source_id: 'lighthouse.md', title: 'Lighthouse', body: OTHER_BODY },
      ],
    });
    const { sessionId } = await run<{ sessionId: string }>(ledger, 'start_session', {
      config: { chunks: [{ chunk_id: 'c0', position: 0, text: 'a chunk' }] },
    });
    await run(ledger, 'annotate_chunk', { sessionId, chunkId: 'c0', notes: 'a sealed note' }, 'alice');
    const [key] = await ledger.db.query<{ wrapped: string }>(
      "SELECT wrapped FROM data_keys WHERE subject = 'alice'",
    );
    wrappedKey = key!.wrapped;
    await ledger.catchUp();
    // A search as of this moment keeps its own index, with its own copy of the chunk texts.
    const asOf = await ledger.store.headPosition();
    const past = await run<{ results: { id: string }[] }>(ledger, 'search', {
      query: SECRET,
      mode: 'keyword',
      asOf,
    });
    expect(past.results.map((r) => r.id)).toEqual([secret]);
    expect(holding(dataDir, SECRET)).not.toEqual([]);
    expect(holding(dataDir, wrappedKey)).not.toEqual([]);

    expect(await run(ledger, 'ledger.forget', { document_id: secret, reason: 'erasure request' })).toMatchObject({
      contents_erased: 3,
      contents_kept: 1,
    });
    expect(await run(ledger, 'ledger.forget', { subject: 'alice' })).toMatchObject({ keys_forgotten: 1 });
  });
  afterAll(async () => {
    await ledger.close();
  });

  it('drops, while the ledger runs, the copies that searches as of an earlier moment made', async () => {
    await expect.poll(() => holding(dataDir, SECRET), { timeout: 30_000 }).toEqual([]);
  });

  describe('after a restart', () => {
    beforeAll(async () => {
      await ledger.close();
      await backupDataDir(dataDir, backup);
      ledger = await open(dataDir);
      await ledger.catchUp();
    });

    it("leaves no byte of a forgotten document's text in any file, WAL included", () => {
      expect(holding(dataDir, SECRET)).toEqual([]);
    });

    it('writes no forgotten text into a backup taken afterwards', () => {
      const unpacked = gunzipSync(readFileSync(backup));
      expect(unpacked.includes(SECRET)).toBe(false);
      expect(unpacked.includes(SHARED)).toBe(true);
    });

    it("leaves no copy of a forgotten subject's data key, which would open their notes again", () => {
      expect(holding(dataDir, wrappedKey)).toEqual([]);
      expect(gunzipSync(readFileSync(backup)).includes(wrappedKey)).toBe(false);
    });

    it('keeps other documents whole and searchable, and a text the forgotten one shared for its other holder', async () => {
      const found = async (query: string) =>
        (await run<{ results: { id: string }[] }>(ledger, 'search', { query, mode: 'keyword' })).results.map(
          (r) => r.id,
        );
      expect(await found(`${OTHER} lighthouse`)).toEqual([lighthouse]);
      expect(await found(SHARED)).toEqual([harbour]);
      expect(await found(SECRET)).toEqual([]);
      expect(await run(ledger, 'get', { id: lighthouse })).toMatchObject({ body: OTHER_BODY });
      expect(await run(ledger, 'get', { id: harbour })).toMatchObject({ body: SHARED_SECTION });
      expect(await run(ledger, 'get', { id: secret })).toMatchObject({ body: '', forgotten: true });
      expect(holding(dataDir, SHARED)).not.toEqual([]);
    });
  });
});

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

const KEYWORD_ONLY = { CTX_EMBEDDINGS__PROVIDER: 'none' };

describe('ctx ingest reads text in the encodings files come in', () => {
  it('finds the words of UTF-16 and Latin-1 files as written, and still skips binaries', async () => {
    const folder = tempDataDir('ctx-encodings-');
    const utf16le = Buffer.from('\ufeffHarbour pilot rota for the winter\r\n', 'utf16le');
    writeFileSync(path.join(folder, 'rota.txt'), utf16le);
    writeFileSync(path.join(folder, 'tides.txt'), Buffer.from(Buffer.from('\ufeffTide tables, spring équinoxe\n', 'utf16le')).swap16());
    writeFileSync(path.join(folder, 'menu.md'), Buffer.from('# Menu\n\n\x93Crème brûlée\x94 for the café\n', 'latin1'));
    writeFileSync(path.join(folder, 'logo.png'), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    const dataDir = tempDataDir();
    const env = { ...KEYWORD_ONLY, CTX_INGEST__ROOTS: folder };

    const ingested = await runCtx(['ingest', folder, '--data-dir', dataDir], env);
    expect(ingested.code, ingested.stderr).toBe(0);
    expect(ingested.stdout).toMatch(/4 files: 3 new, 0 updated, 0 unchanged, 1 skipped/);
    expect(ingested.stdout).toMatch(/logo\.png: binary/);

    const found: [query: string, file: string, words: string][] = [
      ['harbour pilot', 'rota.txt', 'Harbour pilot rota'],
      ['équinoxe', 'tides.txt', 'spring équinoxe'],
      ['brûlée café', 'menu.md', '“Crème brûlée” for the café'],
    ];
    for (const [query, file, words] of found) {
      const searched = await runCtx(['search', query, '--mode', 'keyword', '--json', '--data-dir', dataDir], env);
      expect(searched.code, searched.stderr).toBe(0);
      const [first] = (JSON.parse(searched.stdout) as { results: { source_id: string; snippet: string }[] }).results;
      expect(first?.source_id, query).toMatch(new RegExp(`${file.replace('.', '\\.')}$`));
      expect(first?.snippet, query).toContain(words);
    }
  }, 180_000);
});

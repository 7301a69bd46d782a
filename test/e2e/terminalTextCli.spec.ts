import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

const KEYWORD_ONLY = { CTX_EMBEDDINGS__PROVIDER: 'none' };
/** Sets the terminal's title, turns text red, clears the screen; U+009B is the one-character CSI. */
const SEQUENCES = '\u001b]0;owned\u0007 \u001b[31mred\u001b[0m \u001b[2J \u009b2J\r';
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const RAW_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('ctx writes no control sequence a document or a file name holds', () => {
  it('shows them escaped in text, keeps their value in JSON, and in its error messages', async () => {
    const folder = tempDataDir('ctx-sequences-');
    const name = 'notes\u001b[8m.md';
    writeFileSync(path.join(folder, name), `plover sightings ${SEQUENCES} end\n`);
    const dataDir = tempDataDir();
    const env = { ...KEYWORD_ONLY, CTX_INGEST__ROOTS: folder };
    const ingested = await runCtx(['ingest', folder, '--data-dir', dataDir], env);
    expect(ingested.code, ingested.stderr).toBe(0);

    const shown = await runCtx(['search', 'plover', '--data-dir', dataDir], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toMatch(RAW_CONTROLS);
    expect(shown.stdout).toContain('notes\\u001b[8m.md');
    expect(shown.stdout).toContain('\\u001b]0;owned\\u0007 \\u001b[31mred\\u001b[0m \\u001b[2J \\u009b2J');

    const asJson = await runCtx(['search', 'plover', '--json', '--data-dir', dataDir], env);
    expect(asJson.stdout).not.toMatch(RAW_CONTROLS);
    const [hit] = (JSON.parse(asJson.stdout) as { results: { source_id: string; snippet: string }[] }).results;
    expect(hit?.source_id.endsWith(name)).toBe(true);
    expect(hit?.snippet).toContain('\u001b[31mred\u001b[0m \u001b[2J \u009b2J');

    const refused = await runCtx(['ingest', path.join(folder, 'gone\u001b[2J.md'), '--data-dir', dataDir], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).not.toMatch(RAW_CONTROLS);
    expect(refused.stderr).toContain('gone\\u001b[2J.md');
  }, 180_000);
});

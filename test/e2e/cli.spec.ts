import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

describe('ctx CLI', () => {
  it('exits 2 with every problem listed when the configuration is invalid', async () => {
    const dir = tempDataDir();
    const file = path.join(dir, 'ctx.toml');
    writeFileSync(file, '[server]\nbind = "nowhere"\n[projections]\nbatch_size = -1\n');
    const { code, stderr } = await runCtx(['history', '--config', file]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/server\.bind/);
    expect(stderr).toMatch(/projections\.batchSize/);
  });

  it('exits 2 on an unknown command and prints help on --help', async () => {
    expect((await runCtx(['frobnicate'])).code).toBe(2);
    const help = await runCtx(['history', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/list the events of a stream/);
  });

  it('prints an empty history for an unknown stream, as JSON or text', async () => {
    const dataDir = tempDataDir();
    const json = await runCtx(['history', 'job-missing', '--json', '--data-dir', dataDir]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ events: [], nextCursor: null });
    const text = await runCtx(['history', '--data-dir', dataDir]);
    expect(text.stdout.trim()).toBe('No events.');
  });

  it('shows projection status and rebuilds a projection', async () => {
    const dataDir = tempDataDir();
    const status = await runCtx(['projections', 'status', '--json', '--data-dir', dataDir]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'streams', lagEvents: 0, state: 'running' })]),
    );
    const rebuild = await runCtx(['projections', 'rebuild', 'streams', '--data-dir', dataDir]);
    expect(rebuild.code).toBe(0);
    expect(rebuild.stdout).toMatch(/rebuilt streams/);
    const unknown = await runCtx(['projections', 'rebuild', 'nope', '--data-dir', dataDir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No projection named 'nope'/);
  });

  it('serves /health and refuses a second process that needs the data directory itself', async () => {
    const dataDir = tempDataDir();
    const server = spawnCtx(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0']);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        server.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
          if (match) resolve(match[1]!);
        });
        server.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
      });
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });
      const second = await runCtx(['migrate', '--to', path.join(dataDir, 'elsewhere.toml'), '--data-dir', dataDir]);
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(/in use by the server at http:\/\/127\.0\.0\.1:\d+ \(process \d+\); stop it first/);
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.on('exit', resolve));
    }
  });
});

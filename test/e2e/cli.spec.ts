import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { STARTER_VOCABULARY } from '../../src/configTemplate.js';
import { openPglite } from '../../infra/postgres/database.js';
import { runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

/** `ctx serve` in a process of its own: its stdout so far, the first group `started` matches there, and its exit. */
const serving = (args: string[], started: RegExp, env: NodeJS.ProcessEnv = {}) => {
  const server = spawnCtx(args, env);
  let out = '';
  server.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise((resolve) => server.on('exit', resolve));
  const match = new Promise<string>((resolve, reject) => {
    server.stdout!.on('data', () => {
      const found = started.exec(out);
      if (found) resolve(found[1]!);
    });
    server.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return { server, output: () => out, started: match, exited };
};

describe('ctx CLI', () => {
  it('exits 2 with every problem listed when the configuration is invalid', async () => {
    const dir = tempDataDir();
    const file = path.join(dir, 'ctx.toml');
    writeFileSync(file, '[server]\nbind = "nowhere"\n[projections]\nbatch_size = -1\n');
    const { code, stderr } = await runCtx(['history', '--config', file], { CTX_SERVER__BODY_LIMIT_BYTES: '0' });
    expect(code).toBe(2);
    expect(stderr).toContain(`server.bind: expected host:port, e.g. 127.0.0.1:7331 (in ${file})`);
    expect(stderr).toContain(`projections.batch_size: Too small: expected number to be >=1 (in ${file})`);
    expect(stderr).toContain('server.body_limit_bytes: Too small: expected number to be >0 (from CTX_SERVER__BODY_LIMIT_BYTES)');
  });

  it('says what was given where a number was expected, and which setting a misspelt one meant', async () => {
    const { code, stderr } = await runCtx(['sources', '--data-dir', path.join(tempDataDir(), 'd')], {
      CTX_SERVER__BODY_LIMIT_BYTES: 'abc',
      CTX_SERCH__DEFAULT_LIMIT: '5',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('server.body_limit_bytes: expected a number, got "abc" (from CTX_SERVER__BODY_LIMIT_BYTES)');
    expect(stderr).toContain('serch: not a setting (did you mean [search]?) (from CTX_SERCH__DEFAULT_LIMIT)');
  });

  it('refuses to serve on a port another program holds, saying so before it creates the data directory', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const bind = `127.0.0.1:${(holder.address() as AddressInfo).port}`;
    const dataDir = path.join(tempDataDir(), 'never-made');
    try {
      const { code, stderr } = await runCtx(['serve', '--data-dir', dataDir, '--bind', bind]);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `ctx: ${bind} is in use by another program (another ctx serve?): stop it, or listen elsewhere with --bind 127.0.0.1:PORT or [server] bind in ctx.toml\n`,
      );
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      holder.close();
    }
  });

  it('reads ./ctx.toml from the working directory, and --config instead of it', async () => {
    const cwd = tempDataDir();
    writeFileSync(path.join(cwd, 'ctx.toml'), '[projections]\nbatch_size = 0\n');
    const found = await runCtx(['history'], {}, { cwd });
    expect(found.code).toBe(2);
    expect(found.stderr).toContain(`projections.batch_size: Too small: expected number to be >=1 (in ${path.join(cwd, 'ctx.toml')})`);

    const other = path.join(cwd, 'other.toml');
    writeFileSync(other, '[storage]\ndata_dir = "./from-other"\n[embeddings]\nprovider = "none"\n');
    const chosen = await runCtx(['history', '--config', other], {}, { cwd });
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.stdout.trim()).toBe('No events.');
    expect(existsSync(path.join(cwd, 'from-other', 'pgdata'))).toBe(true);
  });

  it('writes a commented ctx.toml with ctx init, and replaces one only with --force', async () => {
    const cwd = tempDataDir();
    const file = path.join(cwd, 'ctx.toml');
    const first = await runCtx(['init'], {}, { cwd });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe(`wrote ${file}`);
    const written = readFileSync(file, 'utf8');
    expect(written).toMatch(/^bind = "127\.0\.0\.1:7331" +# /m);
    expect(loadConfig({ file, env: {} })).toEqual({ ...loadConfig({ env: {} }), annotations: STARTER_VOCABULARY });

    writeFileSync(file, '[server]\nbind = "127.0.0.1:9000"\n');
    const again = await runCtx(['init'], {}, { cwd });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${file} exists; --force replaces it`);
    expect(readFileSync(file, 'utf8')).toBe('[server]\nbind = "127.0.0.1:9000"\n');

    expect((await runCtx(['init', '--force'], {}, { cwd })).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(written);
  });

  it('refuses arguments and options a command does not take, with exit code 2', async () => {
    const serve = await runCtx(['serve', 'foo', '--bind', '127.0.0.1:0', '--data-dir', tempDataDir()]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/value 'foo' is invalid for argument 'surface'\. Allowed choices are mcp/);
    const mode = await runCtx(['search', 'tokens', '--mode', 'fuzzy']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toMatch(/Allowed choices are keyword, semantic, hybrid/);
    const option = await runCtx(['keys', 'list', '--verbose']);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/unknown option '--verbose'/);
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
    expect(JSON.parse(json.stdout)).toEqual({ events: [], next_cursor: null });
    const text = await runCtx(['history', '--data-dir', dataDir]);
    expect(text.stdout.trim()).toBe('No events.');
  });

  it('shows projection status and rebuilds a projection', async () => {
    const dataDir = tempDataDir();
    const status = await runCtx(['projections', 'status', '--json', '--data-dir', dataDir]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'streams', lag_events: 0, state: 'running' })]),
    );
    // As an older version left it: the stored copy says which version built it.
    const streams = (JSON.parse(status.stdout) as { name: string; version: number }[]).find((p) => p.name === 'streams')!;
    const db = await openPglite(path.join(dataDir, 'pgdata'));
    await db.query(`UPDATE projection_checkpoints SET version = $1 WHERE name = 'streams' AND slot = 'live'`, [streams.version - 1]);
    await db.close();
    const older = await runCtx(['projections', 'status', '--data-dir', dataDir]);
    expect(older.code).toBe(0);
    expect(older.stdout).toMatch(new RegExp(`^streams +${streams.version - 1} \\(rebuild for ${streams.version}\\) `, 'm'));

    const rebuild = await runCtx(['projections', 'rebuild', 'streams', '--data-dir', dataDir]);
    expect(rebuild.code).toBe(0);
    expect(rebuild.stdout).toMatch(/rebuilt streams/);
    const after = await runCtx(['projections', 'status', '--json', '--data-dir', dataDir]);
    expect(JSON.parse(after.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'streams', version: streams.version, built_version: streams.version })]),
    );
  });

  it('names the projections when asked to rebuild one that does not exist', async () => {
    const unknown = await runCtx(['projections', 'rebuild', 'nope', '--data-dir', tempDataDir()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No projection named 'nope'; projections: streams, documents, keyword, .*jobs/);
  });

  it('serves /health, says where at start-up and when it stops, and refuses a second process that needs the data directory itself', async () => {
    const dataDir = tempDataDir();
    const { server, output, started, exited } = serving(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0'], /"url":"(http:\/\/[^"]+)"/);
    try {
      const url = await started;
      expect(output()).toContain(`"msg":"Context Ledger is serving on ${url} (MCP ${url}/mcp, admin console ${url}/admin)"`);
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });
      const second = await runCtx(['migrate', '--to', path.join(dataDir, 'elsewhere.toml'), '--data-dir', dataDir]);
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(/in use by the server at http:\/\/127\.0\.0\.1:\d+ \(process \d+\); stop it first/);
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
    const lines = output().trim().split('\n').map((line) => JSON.parse(line) as { level: number; msg: string; reqId?: string });
    // Requests are logged at debug, below the default level.
    expect(lines.filter((line) => line.reqId !== undefined)).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'Context Ledger stopped' });
  });

  it('bound beyond loopback, gives the URL by the name it answers to, not by an address it refuses', async () => {
    const { server, output, started, exited } = serving(
      ['serve', '--data-dir', tempDataDir(), '--bind', '0.0.0.0:0'],
      /"url":"http:\/\/ctx\.internal:(\d+)"/,
      { CTX_SERVER__ALLOWED_HOSTS: 'ctx.internal', CTX_AUTH__JWT_SECRET: 'a test secret of at least thirty-two characters' },
    );
    try {
      const port = await started;
      const named = `http://ctx.internal:${port}`;
      expect(output()).toContain(
        `"msg":"Context Ledger is serving on ${named} (MCP ${named}/mcp, admin console ${named}/admin, listening on 0.0.0.0:${port})"`,
      );
      // The name the URL gives is answered; the address it would otherwise have given is refused.
      const status = (host: string) =>
        new Promise<number | undefined>((resolve, reject) =>
          request({ host: '127.0.0.1', port: Number(port), path: '/health', headers: { host } }, (response) => {
            response.resume();
            resolve(response.statusCode);
          })
            .on('error', reject)
            .end(),
        );
      expect(await status(`ctx.internal:${port}`)).toBe(200);
      expect(await status(`0.0.0.0:${port}`)).toBe(403);
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  });
});

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctxCommand, runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { until } from '../support/polling.js';

const JWT_SECRET = 'cli-server-secret-that-is-long-enough-0123456789';
/** Each spawned process opens a database: a group of them takes minutes on a busy machine. */
const SLOW = { timeout: 300_000 };
const ENV = { CTX_EMBEDDINGS__PROVIDER: 'none', CTX_AUTH__JWT_SECRET: JWT_SECRET, ...tempRootsEnv() };

const isGone = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  // A child handed to a parent that does not reap it lingers as a zombie: it has exited.
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

const serverFile = (dataDir: string) => path.join(dataDir, 'server.json');

/** Every process a test starts, ended when the file is done, whatever became of the test. */
const started: number[] = [];
afterAll(() => {
  for (const pid of started.filter((p) => !isGone(p))) process.kill(pid, 'SIGKILL');
});

/** `ctx serve` on a free port, once it has said where it listens. */
const serve = async (dataDir: string, env: NodeJS.ProcessEnv = {}) => {
  const child = spawnCtx(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0'], { ...ENV, ...env });
  started.push(child.pid!);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  await until(() => exited || existsSync(serverFile(dataDir)));
  if (exited) throw new Error(`ctx serve exited: ${output}`);
  const { url } = JSON.parse(readFileSync(serverFile(dataDir), 'utf8')) as { url: string };
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const done = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await done;
    },
  };
};

const ctx = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const result = await runCtx(args, { ...ENV, ...env });
  if (result.code !== 0) throw new Error(`ctx ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
};

const docsFolder = () => {
  const dir = path.join(tempDataDir('ctx-docs-'), 'docs');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'buckets.md'), '# Rate limits\n\nToken buckets refill at a steady rate.\n');
  return dir;
};

describe('ctx on its own', SLOW, () => {
  it('ingests a folder into a fresh data directory, returns, and a later process finds it', async () => {
    const dataDir = tempDataDir();
    const ingest = await runCtx(['ingest', docsFolder(), '--data-dir', dataDir], ENV);
    expect(ingest.code).toBe(0);
    expect(ingest.stdout).toMatch(/1 files: 1 new/);
    const found = await ctx(['search', 'token', 'buckets', '--data-dir', dataDir]);
    expect(found).toMatch(/^1\. buckets\.md /);
    const status = JSON.parse(await ctx(['projections', 'status', '--json', '--data-dir', dataDir])) as {
      name: string;
      lag_events: number;
    }[];
    expect(status.find((p) => p.name === 'documents')).toMatchObject({ lag_events: 0 });
  });
});

describe('ctx beside a running server', SLOW, () => {
  const dataDir = tempDataDir();
  const docs = docsFolder();
  let server: Awaited<ReturnType<typeof serve>>;
  const remote: Record<string, string> = {};
  beforeAll(async () => {
    server = await serve(dataDir);
  });
  afterAll(() => server.stop());

  it('runs the quick tour through the server that holds the data directory', async () => {
    expect(await ctx(['ingest', docs, '--data-dir', dataDir])).toMatch(/1 files: 1 new/);
    remote.search = await ctx(['search', 'token', 'buckets', '--data-dir', dataDir]);
    expect(remote.search).toMatch(/^1\. buckets\.md /);
    const id = /id ([0-9a-f-]{36})/.exec(remote.search)![1]!;
    remote.get = await ctx(['get', id, '--data-dir', dataDir]);
    expect(remote.get).toContain('Token buckets refill');
    remote.sources = await ctx(['sources', '--data-dir', dataDir]);
    expect(remote.sources).toMatch(/filesystem\s+1\s+healthy/);
    const history = JSON.parse(await ctx(['history', '--json', '--data-dir', dataDir])) as { events: { type: string }[] };
    expect(history.events.map((e) => e.type)).toContain('DocumentIngested');
    const status = JSON.parse(await ctx(['projections', 'status', '--json', '--data-dir', dataDir])) as {
      name: string;
      state: string;
    }[];
    expect(status.find((p) => p.name === 'documents')).toMatchObject({ state: 'running' });
  });

  it('creates and lists keys and issues tokens through the server', async () => {
    const created = JSON.parse(
      await ctx(['keys', 'create', '--scopes', 'search:read', '--tenant', 'acme', '--json', '--data-dir', dataDir]),
    ) as { key_id: string; api_key: string; scopes: string[]; tenant: string };
    expect(created).toMatchObject({ scopes: ['search:read'], tenant: 'acme' });
    expect(created.api_key).toMatch(/^[0-9a-f]{32}$/);
    const listed = JSON.parse(await ctx(['keys', 'list', '--json', '--data-dir', dataDir])) as { key_id: string }[];
    expect(listed.map((k) => k.key_id)).toContain(created.key_id);
    const pair = JSON.parse(
      await ctx(['tokens', '--subject', 'ci-bot', '--scopes', 'search:read', '--tenant', 'acme', '--json', '--data-dir', dataDir]),
    ) as { access_token: string; refresh_token: string; expires_in: number };
    expect(pair.expires_in).toBe(900);
    // The server keeps the refresh token it issued: it exchanges it.
    const refreshed = await fetch(`${server.url}/api/v1/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: pair.refresh_token }),
    });
    expect(refreshed.status).toBe(200);
    expect(await ctx(['keys', 'revoke', created.key_id, '--data-dir', dataDir])).toBe(`revoked ${created.key_id}\n`);
  });

  it('runs jobs and annotation sessions through the server', async () => {
    // The server runs the job; the command follows it to the end.
    const followed = await ctx(['index', path.dirname(docs), '--follow', '--json', '--data-dir', dataDir]);
    const final = JSON.parse(followed.slice(followed.lastIndexOf('{\n'))) as { job_id: string };
    expect(final).toMatchObject({ status: 'completed', progress_percentage: 100 });
    const jobs = JSON.parse(await ctx(['jobs', '--json', '--data-dir', dataDir])) as object;
    expect(jobs).toMatchObject({ project_id: 'default', jobs: [expect.objectContaining({ job_id: final.job_id })] });
    expect(await ctx(['jobs', 'history', final.job_id, '--data-dir', dataDir])).toContain('IndexingJobCompleted');
    const file = path.join(tempDataDir('ctx-session-'), 'session.json');
    writeFileSync(file, JSON.stringify({ chunks: [{ chunk_id: 'c0', position: 0, text: 'fees' }] }));
    const started = JSON.parse(await ctx(['annotations', 'start', file, '--json', '--data-dir', dataDir])) as {
      session_id: string;
    };
    expect(started.session_id).toEqual(expect.any(String));
    await ctx(['annotations', 'annotate', started.session_id, 'c0', '--tag', 'fee', '--data-dir', dataDir]);
    const progress = JSON.parse(await ctx(['annotations', 'progress', started.session_id, '--json', '--data-dir', dataDir])) as object;
    expect(progress).toMatchObject({ annotated_chunks: 1, pending_chunks: 0 });
  });

  it('goes to the server named by --server from anywhere', async () => {
    const search = ['search', 'token', 'buckets'];
    remote.search = await ctx([...search, '--data-dir', dataDir]);
    remote.sources = await ctx(['sources', '--data-dir', dataDir]);
    const elsewhere = tempDataDir();
    expect(await ctx([...search, '--server', server.url, '--data-dir', elsewhere])).toBe(remote.search);
    expect(await ctx(['sources'], { CTX_SERVER_URL: server.url })).toBe(remote.sources);
  });

  it('says plainly that backup and migrate need the server stopped', async () => {
    const backup = await runCtx(['backup', path.join(tempDataDir(), 'b.ctxbak'), '--data-dir', dataDir], ENV);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain(`in use by the server at ${server.url}`);
    expect(backup.stderr).toMatch(/stop it first/);
  });

  it('prints what the same commands print in this process once the server is gone', async () => {
    await server.stop();
    expect(existsSync(serverFile(dataDir))).toBe(false);
    expect(await ctx(['search', 'token', 'buckets', '--data-dir', dataDir])).toBe(remote.search);
    expect(await ctx(['sources', '--data-dir', dataDir])).toBe(remote.sources);
    const id = /id ([0-9a-f-]{36})/.exec(remote.search!)![1]!;
    expect(await ctx(['get', id, '--data-dir', dataDir])).toBe(remote.get);
  });
});

describe('ctx beside a server with authentication on', SLOW, () => {
  const dataDir = tempDataDir();
  const auth = { CTX_AUTH__MODE: 'on' };
  let server: Awaited<ReturnType<typeof serve>>;
  let key: string;
  beforeAll(async () => {
    key = (JSON.parse(await ctx(['keys', 'create', '--scopes', 'admin,search:read', '--tenant', 'default', '--json', '--data-dir', dataDir], auth)) as { api_key: string }).api_key;
    server = await serve(dataDir, auth);
  });
  afterAll(() => server.stop());

  it('says which credentials are missing, with exit code 2', async () => {
    const { code, stderr } = await runCtx(['sources', '--data-dir', dataDir], ENV);
    expect(code).toBe(2);
    expect(stderr).toContain(`The server at ${server.url} needs credentials`);
    expect(stderr).toMatch(/--api-key/);
    expect(stderr).toMatch(/CTX_API_KEY/);
  });

  it('works with an API key from --api-key or CTX_API_KEY', async () => {
    expect(await ctx(['sources', '--api-key', key, '--data-dir', dataDir])).toBe('No sources.\n');
    const created = JSON.parse(
      await ctx(['keys', 'create', '--scopes', 'search:read', '--tenant', 'default', '--json', '--data-dir', dataDir], { CTX_API_KEY: key }),
    ) as { tenant: string };
    expect(created.tenant).toBe('default');
    const refused = await runCtx(['sources', '--api-key', '0'.repeat(32), '--data-dir', dataDir], ENV);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Unknown or revoked API key/);
  });
});

describe('servers stop with the process that started them', SLOW, () => {
  /**
   * Starts `ctx <args>` from a wrapper process, as npx or a desktop client does. Their stdin is a
   * FIFO this test holds open, so that only the parent goes away when the wrapper is killed.
   */
  const throughWrapper = async (args: string[]) => {
    const fifo = path.join(tempDataDir('ctx-fifo-'), 'stdin');
    execFileSync('mkfifo', [fifo]);
    const stdin = openSync(fifo, 'r+');
    const { command, args: full, cwd } = ctxCommand(args);
    const script = `
      const { spawn } = require('node:child_process');
      const child = spawn(${JSON.stringify(command)}, ${JSON.stringify(full)}, { cwd: ${JSON.stringify(cwd)}, stdio: 'inherit' });
      process.send(child.pid);
      setInterval(() => {}, 1 << 30);`;
    const wrapper: ChildProcess = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, ...ENV },
      stdio: [stdin, 'ignore', 'ignore', 'ipc'],
    });
    started.push(wrapper.pid!);
    const pid = await new Promise<number>((resolve) => wrapper.once('message', (m) => resolve(m as number)));
    started.push(pid);
    return { wrapper, pid, done: () => closeSync(stdin) };
  };

  it('ctx serve stops cleanly when its parent is killed', async () => {
    const dataDir = tempDataDir();
    const { wrapper, pid, done } = await throughWrapper(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0']);
    await until(() => existsSync(serverFile(dataDir)));
    wrapper.kill('SIGKILL');
    await until(() => isGone(pid));
    done();
    // It closed the data directory on its way out.
    expect(existsSync(path.join(dataDir, 'ctx.lock'))).toBe(false);
  });

  it('ctx mcp stops cleanly when its parent is killed, though its stdin stays open', async () => {
    const dataDir = tempDataDir();
    const { wrapper, pid, done } = await throughWrapper(['mcp', '--data-dir', dataDir]);
    await until(() => existsSync(path.join(dataDir, 'ctx.lock')));
    wrapper.kill('SIGKILL');
    await until(() => isGone(pid));
    done();
    expect(existsSync(path.join(dataDir, 'ctx.lock'))).toBe(false);
  });

  it('ctx serve stops cleanly on SIGHUP', async () => {
    const dataDir = tempDataDir();
    const child = spawnCtx(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0'], ENV);
    started.push(child.pid!);
    await until(() => existsSync(serverFile(dataDir)));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGHUP');
    expect(await exit).toBe(0);
    expect(existsSync(path.join(dataDir, 'ctx.lock'))).toBe(false);
  });
});

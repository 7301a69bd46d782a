import { spawn } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, finished } from '../../test/support/builtCli.js';
import { tempDataDir } from '../../test/support/ledger.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(path.join(import.meta.dirname, 'Dockerfile'), 'utf8');

/** The instructions of the Dockerfile's last stage, the image that runs (continuation lines joined). */
const runtimeStage = (): { instruction: string; args: string }[] => {
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n');
  const stage = lines.slice(lines.findLastIndex((line) => line.startsWith('FROM ')));
  return stage
    .filter((line) => /^[A-Z]+ /.test(line))
    .map((line) => ({ instruction: line.slice(0, line.indexOf(' ')), args: line.slice(line.indexOf(' ') + 1).trim() }));
};
const stage = runtimeStage();
const argsOf = (instruction: string) => stage.filter((i) => i.instruction === instruction).map((i) => i.args);
const execForm = (instruction: string) => JSON.parse(argsOf(instruction).at(-1)!) as string[];

/** An unprivileged user for the server, as the image's `USER node`; only root can switch to it. */
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

const children: number[] = [];
afterAll(() => {
  for (const pid of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * Lays out /app as the runtime stage copies it, from this checkout's build. node_modules is linked
 * rather than copied: it is the one folder a build installs whole.
 */
const layOutImage = (root: string) => {
  const app = path.join(root, 'app');
  mkdirSync(app);
  for (const copy of argsOf('COPY')) {
    const [from, source, target] = copy.split(/\s+/) as [string, string, string];
    expect(from).toBe('--from=build');
    const relative = path.relative('/app', source);
    const destination = path.resolve(app, target.endsWith('/') ? path.join(target, path.basename(relative)) : target);
    if (relative === 'node_modules') symlinkSync(path.join(ROOT, relative), destination);
    else cpSync(path.join(ROOT, relative), destination, { recursive: true });
  }
  return app;
};

describe('the image', () => {
  it('runs as a non-root user with a data volume, a health check and the server as its command', () => {
    expect(argsOf('USER')).toEqual(['node']);
    expect(argsOf('VOLUME')).toEqual(['/data']);
    expect(argsOf('ENV')).toContain('CTX_STORAGE__DATA_DIR=/data');
    expect(argsOf('HEALTHCHECK').join(' ')).toMatch(/127\.0\.0\.1:7331\/health/);
    expect(execForm('CMD')).toContain('serve');
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.ctx', 'infra/deploy/.env']));
  });

  it(
    'starts from the files its runtime stage copies, writes only to its data volume, and serves /health and /admin',
    { timeout: 300_000 },
    async () => {
      await ensureBuilt();
      const root = tempDataDir('ctx-image-');
      const app = layOutImage(root);
      const data = path.join(root, 'data');
      mkdirSync(data);
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      const config = path.join(root, 'ctx.toml');
      // The image's command with a configuration of its own: the embedded store in the data volume.
      writeFileSync(
        config,
        `[server]\nallowed_hosts = ["context-ledger"]\n[embeddings]\nprovider = "none"\n`,
      );
      if (asRoot) {
        for (const dir of [tmpdir(), root, app, path.dirname(config)]) chmodSync(dir, 0o755);
        chownSync(data, NOBODY, NOBODY);
        chmodSync(config, 0o644);
      }
      // The image's environment, its /data volume mounted at `data`.
      const env = Object.fromEntries(
        argsOf('ENV').map((e) => e.split('=') as [string, string]).map(([k, v]) => [k, v === '/data' ? data : v]),
      );
      const args = [...execForm('ENTRYPOINT'), ...execForm('CMD')].map((arg) =>
        arg === '/etc/ctx/ctx.toml' ? config : arg === '0.0.0.0:7331' ? `0.0.0.0:${port}` : arg,
      );
      expect(args.slice(0, 2)).toEqual(['node', 'bin/ctx.js']);
      const server = spawn(process.execPath, args.slice(1), {
        cwd: app,
        env: {
          PATH: process.env.PATH,
          HOME: data,
          TMPDIR: data,
          ...env,
        },
        ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(server.pid!);
      const exited = finished(server);
      let gone = false;
      void exited.then(() => (gone = true));

      const base = `http://127.0.0.1:${port}`;
      let health: Response | undefined;
      while (!gone && !health) {
        health = await fetch(`${base}/health`).catch(() => undefined);
        if (!health) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      if (!health) throw new Error(`the server exited: ${(await exited).stderr}${(await exited).stdout}`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
      const admin = await fetch(`${base}/admin`);
      expect(admin.status).toBe(200);
      expect(await admin.text()).toContain('<html');

      server.kill('SIGTERM');
      await exited;
      expect(existsSync(path.join(app, '.ctx'))).toBe(false);
      expect(existsSync(path.join(data, 'secrets.key'))).toBe(true);
    },
  );
});

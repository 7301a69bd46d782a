import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';

/** Each spawned process opens a database: a group of them takes minutes on a busy machine. */
const SLOW = { timeout: 300_000 };
const ENV = { CTX_EMBEDDINGS__PROVIDER: 'none', ...tempRootsEnv() };
const KEY = 'ctx_the-key-that-must-not-leak';
const SECRET_TEXT = 'the private note that must not leak';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A process on loopback posing as the data directory's server: it records what reaches it and proves nothing. */
let impostor: http.Server;
let impostorUrl: string;
const seen: Seen[] = [];
beforeAll(async () => {
  impostor = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ proof: '0'.repeat(64), created: 1 }));
    });
  });
  await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
  impostorUrl = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => impostor.close(resolve)));

/** A data directory as a cloned repository can hold it: a lock naming a process that always runs, and a server file. */
const plantedDataDir = (server: object, mode: number) => {
  const dataDir = path.join(tempDataDir('ctx-clone-'), '.ctx');
  mkdirSync(dataDir);
  writeFileSync(path.join(dataDir, 'ctx.lock'), '1');
  writeFileSync(path.join(dataDir, 'server.json'), JSON.stringify(server));
  chmodSync(path.join(dataDir, 'server.json'), mode);
  const jsonl = path.join(path.dirname(dataDir), 'private.jsonl');
  writeFileSync(jsonl, `${JSON.stringify({ source_id: 'private.md', body: SECRET_TEXT })}\n`);
  return { dataDir, jsonl };
};

const ingestThrough = (dataDir: string, jsonl: string) =>
  runCtx(['ingest', '--jsonl', jsonl, '--source', 'notes', '--data-dir', dataDir], { ...ENV, CTX_API_KEY: KEY });

const leaked = (since: number) =>
  seen.slice(since).filter((request) => request.headers['x-api-key'] !== undefined || request.body.includes(SECRET_TEXT));

describe('ctx and the server a data directory names', SLOW, () => {
  it('refuses a server file other users can read or write, and sends nothing to the server it names', async () => {
    const before = seen.length;
    const { dataDir, jsonl } = plantedDataDir({ pid: 1, url: impostorUrl }, 0o644);
    const result = await ingestThrough(dataDir, jsonl);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/server\.json cannot be trusted: other users can read or write it \(mode 644/);
    expect(result.stderr).toContain('nothing was sent to it');
    expect(seen.slice(before)).toEqual([]);
  });

  it('refuses a server that cannot prove it wrote the server file, before sending credentials or data', async () => {
    const before = seen.length;
    const { dataDir, jsonl } = plantedDataDir({ pid: 1, url: impostorUrl, secret: 'a'.repeat(64) }, 0o600);
    const result = await ingestThrough(dataDir, jsonl);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/The server at http:\/\/127\.0\.0\.1:\d+ did not prove it is the one that wrote .*server\.json/);
    expect(leaked(before)).toEqual([]);
    expect(seen.slice(before).map((request) => `${request.method} ${request.url}`)).toEqual(['POST /health/proof']);
  });

  it('refuses a server file naming a URL off loopback', async () => {
    const { dataDir, jsonl } = plantedDataDir({ pid: 1, url: 'http://192.0.2.7:7331', secret: 'a'.repeat(64) }, 0o600);
    const result = await ingestThrough(dataDir, jsonl);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('its URL http://192.0.2.7:7331 is not on loopback');
  });

  it('goes through the real server, which writes its server file for this user alone and proves itself', async () => {
    const dataDir = tempDataDir();
    const child = spawnCtx(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0'], ENV);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      const file = path.join(dataDir, 'server.json');
      while (!existsSync(file) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const advertised = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; secret: string };
      expect(advertised.pid).toBe(child.pid);
      expect(advertised.secret).toMatch(/^[0-9a-f]{64}$/);
      const jsonl = path.join(dataDir, 'notes.jsonl');
      writeFileSync(jsonl, `${JSON.stringify({ source_id: 'notes.md', body: 'quokkas live on Rottnest' })}\n`);
      const ingested = await runCtx(['ingest', '--jsonl', jsonl, '--source', 'notes', '--data-dir', dataDir], ENV);
      expect(ingested.code, ingested.stderr).toBe(0);
      const search = await runCtx(['search', 'quokkas', '--json', '--data-dir', dataDir], ENV);
      expect(search.code, search.stderr).toBe(0);
      expect(search.stdout).toContain('notes.md');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { until } from '../support/polling.js';

/** Each spawned process opens a database, and a run ingests thousands of documents. */
const SLOW = { timeout: 600_000 };
const ENV = { CTX_EMBEDDINGS__PROVIDER: 'none', ...tempRootsEnv() };
const LINES = 3_000;

const started: { pid: number; exited: () => boolean }[] = [];
afterAll(() => {
  for (const child of started) if (!child.exited()) process.kill(child.pid, 'SIGKILL');
});

/** A JSONL file of `lines` documents of about 1 KB each: more than one batch takes, and a request body holds. */
const corpusFile = (lines: number) => {
  const file = path.join(tempDataDir('ctx-jsonl-'), 'corpus.jsonl');
  const filler = 'Bulk loads stream in batches and resume where they stopped. '.repeat(17);
  writeFileSync(
    file,
    Array.from({ length: lines }, (_, i) =>
      JSON.stringify({ source_id: `note-${i}`, title: `Note ${i}`, body: `Note ${i}. ${filler}`, tags: ['bulk'] }),
    ).join('\n') + '\n',
  );
  return file;
};

const ctx = async (args: string[]) => {
  const result = await runCtx(args, ENV);
  if (result.code !== 0) throw new Error(`ctx ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
};

/** Runs `ctx`, and stops it with `signal` once its progress says a batch is stored. */
const interrupted = async (args: string[], signal: NodeJS.Signals) => {
  const child = spawnCtx(args, ENV);
  let exited = false;
  child.on('exit', () => (exited = true));
  started.push({ pid: child.pid!, exited: () => exited });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await until(() => exited || /ingesting [1-9]\d*\/\d+ documents/.test(stderr));
  child.kill(signal);
  await until(() => exited);
  return { stdout, stderr };
};

/** `ctx serve` on a free port, once it has said where it listens. */
const serve = async (dataDir: string, env: NodeJS.ProcessEnv = {}) => {
  const child = spawnCtx(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0'], { ...ENV, ...env });
  let exited = false;
  child.on('exit', () => (exited = true));
  started.push({ pid: child.pid!, exited: () => exited });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const serverFile = path.join(dataDir, 'server.json');
  await until(() => exited || existsSync(serverFile));
  if (exited) throw new Error(`ctx serve exited: ${output}`);
  const { url } = JSON.parse(readFileSync(serverFile, 'utf8')) as { url: string };
  return {
    url,
    stop: async () => {
      if (exited) return;
      child.kill('SIGTERM');
      await until(() => exited);
    },
  };
};

/** How many DocumentIngested events each document stream holds, read page by page from the audit log. */
const ingestionsPerStream = async (url: string): Promise<Map<string, number>> => {
  const counts = new Map<string, number>();
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ type: 'DocumentIngested', limit: '500', order: 'oldest', ...(cursor ? { cursor } : {}) });
    const response = await fetch(`${url}/api/v1/audit/events?${query}`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { events: { stream_id: string }[]; next_cursor: string | null };
    for (const event of page.events) counts.set(event.stream_id, (counts.get(event.stream_id) ?? 0) + 1);
    cursor = page.next_cursor;
  } while (cursor);
  return counts;
};

const documentsOf = async (dataDir: string, source: string) => {
  const { stdout } = await ctx(['sources', '--json', '--data-dir', dataDir]);
  return (JSON.parse(stdout) as { sources: { name: string; doc_count: number }[] }).sources.find((s) => s.name === source)
    ?.doc_count;
};

/** The rerun's summary: every line once, some stored by the interrupted run and the rest by this one. */
const expectResumed = (summary: string) => {
  const counts = new RegExp(`ingested ${LINES} documents: (\\d+) new, 0 updated, (\\d+) unchanged`).exec(summary);
  expect(counts, summary).not.toBeNull();
  const [created, unchanged] = [Number(counts![1]), Number(counts![2])];
  expect(created).toBeGreaterThan(0);
  expect(unchanged).toBeGreaterThan(0);
  expect(created + unchanged).toBe(LINES);
};

const expectEachOnce = async (url: string) => {
  const perStream = await ingestionsPerStream(url);
  expect(perStream.size).toBe(LINES);
  expect([...perStream.values()].filter((n) => n !== 1)).toEqual([]);
};

describe('ctx ingest --jsonl with a file of thousands of lines', SLOW, () => {
  it('in this process: streams it in batches with progress, and a run killed halfway resumes on rerun', async () => {
    const dataDir = tempDataDir();
    const file = corpusFile(LINES);
    const args = ['ingest', '--jsonl', file, '--source', 'team', '--data-dir', dataDir];
    const killed = await interrupted(args, 'SIGKILL');
    expect(killed.stdout).not.toMatch(/ingested/);
    // Ctrl-C says that what is stored stays, and how to go on.
    const stopped = await interrupted(args, 'SIGINT');
    expect(stopped.stderr).toContain('ctx: interrupted: what was stored stays stored; the same command run again goes on from there');

    const rerun = await ctx(args);
    expectResumed(rerun.stdout);
    // Progress with the time left, on stderr.
    expect(rerun.stderr).toMatch(/ingesting \d+\/3000 documents, \d+\/s, \d+ (s|min) left/);
    expect(await documentsOf(dataDir, 'team')).toBe(LINES);

    const server = await serve(dataDir);
    try {
      await expectEachOnce(server.url);
    } finally {
      await server.stop();
    }
  });

  it('through a running server: stays within its body limit, and a run interrupted halfway resumes on rerun', async () => {
    const dataDir = tempDataDir();
    const file = corpusFile(LINES);
    const server = await serve(dataDir);
    try {
      const args = ['ingest', '--jsonl', file, '--source', 'team', '--data-dir', dataDir];
      const stopped = await interrupted(args, 'SIGINT');
      expect(stopped.stdout).not.toMatch(/ingested/);
      expect(stopped.stderr).toContain(`ctx: interrupted: the server at ${server.url} goes on with what it was sent`);

      const rerun = await ctx(args);
      expectResumed(rerun.stdout);
      expect(await documentsOf(dataDir, 'team')).toBe(LINES);
      await expectEachOnce(server.url);
    } finally {
      await server.stop();
    }
  });

  it('through a server with a small body limit: sends smaller batches, passes over a line too large for it, and names it', async () => {
    const dataDir = tempDataDir();
    const file = path.join(tempDataDir('ctx-jsonl-'), 'mixed.jsonl');
    // 60 lines of about 20 KB: a batch of 768 KiB is far over the limit; line 31 is over it alone.
    const body = (i: number) => `Part ${i}. ${'sizeable text '.repeat(i === 30 ? 30_000 : 1_500)}`;
    const lines = Array.from({ length: 60 }, (_, i) => JSON.stringify({ source_id: `part-${i}`, title: `Part ${i}`, body: body(i) }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const server = await serve(dataDir, { CTX_SERVER__BODY_LIMIT_BYTES: '200000' });
    const args = ['ingest', '--jsonl', file, '--source', 'parts', '--data-dir', dataDir];
    try {
      const partly = await runCtx(args, ENV);
      expect(partly.code, partly.stderr).toBe(1);
      expect(partly.stdout).toMatch(/ingested 59 documents: 59 new/);
      expect(partly.stderr).toContain(
        `ctx: not sent: ${file}:31: a line larger than the server at ${server.url} takes in one request (server.body_limit_bytes)`,
      );
      expect(await documentsOf(dataDir, 'parts')).toBe(59);

      // A load that then meets a document the ledger refuses still names the line it passed over.
      const refusing = path.join(path.dirname(file), 'refusing.jsonl');
      const bodiless = JSON.stringify({ source_id: 'part-49', title: 'No body' });
      writeFileSync(refusing, `${lines.map((line, i) => (i === 49 ? bodiless : line)).join('\n')}\n`);
      const stopped = await runCtx(['ingest', '--jsonl', refusing, '--source', 'parts', '--data-dir', dataDir], ENV);
      expect(stopped.code).toBe(2);
      expect(stopped.stderr).toContain(`ctx: not sent: ${refusing}:31: a line larger than the server`);
      expect(stopped.stderr).toContain(`${refusing}:50: body: Invalid input`);
    } finally {
      await server.stop();
    }
    // The remedy the message gives: without the server, the same command stores the line it passed over, and only it.
    const rerun = await ctx(args);
    expect(rerun.stdout).toMatch(/ingested 60 documents: 1 new, 0 updated, 59 unchanged/);
  });

  it('names the line of a document the ledger refuses, keeps the batches before it, and goes on from there when mended', async () => {
    const dataDir = tempDataDir();
    const file = corpusFile(700);
    const good = readFileSync(file, 'utf8').split('\n');
    const bodiless = JSON.stringify({ source_id: 'note-649', title: 'No body' });
    writeFileSync(file, good.map((line, i) => (i === 649 ? bodiless : line)).join('\n'));
    const args = ['ingest', '--jsonl', file, '--source', 'team', '--data-dir', dataDir];
    const refused = await runCtx(args, ENV);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`ctx: Invalid input: ${file}:650: body: Invalid input: expected string, received undefined`);
    expect(refused.stderr).toContain('(lines 501 to 700, sent together, are not stored: mend it and run this again to go on)');
    expect(await documentsOf(dataDir, 'team')).toBe(500);

    writeFileSync(file, good.join('\n'));
    expect((await ctx(args)).stdout).toMatch(/ingested 700 documents: 200 new, 0 updated, 500 unchanged/);
  });

  it('reads a gzipped file as it reads a plain one, and refuses a damaged one before storing anything', async () => {
    const dataDir = tempDataDir();
    const gzipped = path.join(tempDataDir('ctx-jsonl-gz-'), 'corpus.jsonl.gz');
    writeFileSync(gzipped, gzipSync(readFileSync(corpusFile(600))));
    const damaged = path.join(path.dirname(gzipped), 'damaged.jsonl.gz');
    const whole = readFileSync(gzipped);
    writeFileSync(damaged, whole.subarray(0, whole.length / 2));

    const refused = await runCtx(['ingest', '--jsonl', damaged, '--source', 'team', '--data-dir', dataDir], ENV);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`ctx: Cannot read ${damaged}: unexpected end of file`);
    expect(await documentsOf(dataDir, 'team')).toBeUndefined();
    const read = await ctx(['ingest', '--jsonl', gzipped, '--source', 'team', '--data-dir', dataDir]);
    expect(read.stdout).toMatch(/ingested 600 documents: 600 new, 0 updated, 0 unchanged/);
  });

  it('reads standard input once, as it comes, gzipped or not, with progress but no total; an empty file stores nothing', async () => {
    const dataDir = tempDataDir();
    const args = ['ingest', '--jsonl', '-', '--source', 'piped', '--data-dir', dataDir];
    const piped = await runCtx(args, ENV, { input: readFileSync(corpusFile(600)) });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toMatch(/ingested 600 documents: 600 new, 0 updated, 0 unchanged/);
    expect(piped.stderr).toMatch(/ingesting 500 documents, \d+\/s/);
    expect(await documentsOf(dataDir, 'piped')).toBe(600);
    const gzipped = gzipSync(readFileSync(corpusFile(600)));
    const unpacked = await runCtx(args, ENV, { input: gzipped });
    expect(unpacked.stdout, unpacked.stderr).toMatch(/ingested 600 documents: 0 new, 0 updated, 600 unchanged/);
    const damaged = await runCtx(args, ENV, { input: gzipped.subarray(0, 100) });
    expect(damaged.code).toBe(2);
    expect(damaged.stderr).toContain('ctx: Cannot read <stdin>: unexpected end of file');
    // Deeper than a parser's stack: measured and refused with its line, not "not JSON".
    const deep = `{"source_id":"deep","body":"b","metadata":${'{"a":'.repeat(20_000)}{}${'}'.repeat(20_000)}}`;
    const tooDeep = await runCtx(args, ENV, { input: `{"source_id":"s","body":"b"}\n${deep}\n` });
    expect(tooDeep.code).toBe(2);
    expect(tooDeep.stderr).toContain('ctx: <stdin>:2: nested more than 64 levels deep');
    // A JSON array given for JSON lines is one line, and no document.
    const array = await runCtx(args, ENV, { input: '[{"source_id":"a","body":"b"},{"source_id":"c","body":"d"}]\n' });
    expect(array.code).toBe(2);
    expect(array.stderr).toContain("ctx: <stdin>:1: a JSON array, not a document: JSON lines hold one document per line (jq -c '.[]'");

    const empty = path.join(tempDataDir('ctx-jsonl-empty-'), 'empty.jsonl');
    writeFileSync(empty, '');
    const none = await ctx(['ingest', '--jsonl', empty, '--source', 'piped', '--data-dir', dataDir]);
    expect(none.stdout).toMatch(/ingested 0 documents: 0 new, 0 updated, 0 unchanged/);
    const noneAsJson = await ctx(['ingest', '--jsonl', empty, '--source', 'piped', '--data-dir', dataDir, '--json']);
    expect(JSON.parse(noneAsJson.stdout)).toEqual({ results: [] });
  });

  it('gives scripts a bulk route whose budget a client sending one batch after another never exhausts', async () => {
    const dataDir = tempDataDir();
    const server = await serve(dataDir);
    try {
      // More batches than the indexing budget's 10 a minute.
      for (let batch = 0; batch < 15; batch++) {
        const documents = Array.from({ length: 20 }, (_, i) => ({ source_id: `b${batch}-${i}`, body: `Batch ${batch}, document ${i}.` }));
        const response = await fetch(`${server.url}/api/v1/documents/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ source: 'script', documents }),
        });
        expect(response.status, await response.clone().text()).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBe('600');
        const { results } = (await response.json()) as { results: { outcome: string }[] };
        expect(results.map((r) => r.outcome)).toEqual(documents.map(() => 'created'));
      }
    } finally {
      await server.stop();
    }
  });

  it('waits as a 429 answer’s Retry-After says, and goes on', async () => {
    const dataDir = tempDataDir();
    const server = await serve(dataDir);
    // Between the CLI and the server: refuses the first batch as a rate limit would, then passes everything on.
    let refused = 0;
    let refusedAt = 0;
    let retriedAfterMs = 0;
    const target = new URL(server.url);
    const limiter = http.createServer((request, response) => {
      if (request.url?.includes('documents.ingest_batch') && refused === 0) {
        refused++;
        refusedAt = Date.now();
        request.resume();
        response.writeHead(429, { 'retry-after': '2', 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'RATE_LIMIT_ERROR', message: 'Too many requests.' } }));
        return;
      }
      if (request.url?.includes('documents.ingest_batch') && retriedAfterMs === 0) retriedAfterMs = Date.now() - refusedAt;
      const forwarded = http.request(
        { host: target.hostname, port: target.port, path: request.url, method: request.method, headers: { ...request.headers, host: target.host } },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      request.pipe(forwarded);
    });
    await new Promise<void>((resolve) => limiter.listen(0, '127.0.0.1', resolve));
    try {
      const file = corpusFile(600);
      const { port } = limiter.address() as AddressInfo;
      const result = await ctx(['ingest', '--jsonl', file, '--source', 'team', '--server', `http://127.0.0.1:${port}`]);
      expect(result.stdout).toMatch(/ingested 600 documents: 600 new/);
      expect(refused).toBe(1);
      expect(retriedAfterMs).toBeGreaterThanOrEqual(2_000);
    } finally {
      limiter.close();
      await server.stop();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger } from '../../src/main.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { runCtx, spawnCtx } from '../support/cli.js';
import { newEvent, sampleEvent } from '../support/events.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';

const KEYWORD_ONLY = { CTX_EMBEDDINGS__PROVIDER: 'none' };
/** A long actor makes each history line long, so that 500 of them overflow a pipe's buffer several times over. */
const LONG_SUBJECT = `importer-${'x'.repeat(400)}`;
const EVENTS = 500;

let dataDir: string;
let sessionId: string;
const stream = `job-${randomUUID()}`;
const ctx = (args: string[]) => runCtx([...args, '--data-dir', dataDir], { ...KEYWORD_ONLY, ...tempRootsEnv() });

beforeAll(async () => {
  dataDir = tempDataDir();
  const ledger = await openLedger(loadConfig({ env: KEYWORD_ONLY, overrides: { storage: { dataDir } } }), {
    logger: pino({ level: 'silent' }),
  });
  try {
    const events = Array.from({ length: EVENTS }, () =>
      newEvent(sampleEvent(), { actor: { subject: LONG_SUBJECT, tenant: null, via: 'cli' } }),
    );
    await ledger.store.append(stream, events, 'no_stream');
    const context = {
      actor: { subject: 'alice', tenant: null, via: 'cli' as const },
      project: DEFAULT_PROJECT,
    };
    await ledger
      .operation('documents.ingest_batch')
      .run(
        {
          source: 'notes',
          documents: [
            { source_id: 'keeper', title: 'Lighthouse', body: 'The lighthouse keeper trims the lamp.' },
          ],
        },
        { ...context, correlationId: randomUUID() },
      );
    const started = (await ledger.operation('start_session').run(
      {
        config: {
          chunks: [
            { chunk_id: 'a', position: 0, text: 'first' },
            { chunk_id: 'b', position: 1, text: 'second' },
          ],
        },
      },
      { ...context, correlationId: randomUUID() },
    )) as { sessionId: string };
    sessionId = started.sessionId;
    await ledger.catchUp();
  } finally {
    await ledger.close();
  }
});

describe('ctx output', () => {
  it('exits quietly when the reader of its output goes away early', async () => {
    const child = spawnCtx(
      ['history', stream, '--limit', String(EVENTS), '--data-dir', dataDir],
      KEYWORD_ONLY,
    );
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let first = '';
    child.stdout!.once('data', (chunk: Buffer) => {
      first = chunk.toString();
      // As `| head -1` does: read the first lines, then close the pipe.
      child.stdout!.destroy();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(first).toMatch(/^POSITION +RECORDED +STREAM +REV +TYPE +ACTOR\n/);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('prints API keys as a table, and as snake_case JSON with --json', async () => {
    const created = await ctx(['keys', 'create', '--scopes', 'admin', '--label', 'metrics', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(Object.keys(key).sort()).toEqual(['api_key', 'key_id', 'scopes', 'tenant']);
    expect(key).toMatchObject({ scopes: ['admin'], tenant: 'default' });

    const listed = await ctx(['keys', 'list', '--json']);
    const [row] = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(Object.keys(row!).sort()).toEqual([
      'created_at',
      'created_by',
      'key_id',
      'label',
      'revoked',
      'scopes',
      'tenant',
    ]);

    const table = (await ctx(['keys', 'list'])).stdout.trimEnd().split('\n');
    expect(table[0]).toMatch(/^KEY ID +SCOPES +TENANT +LABEL +CREATED +BY +REVOKED$/);
    expect(table[1]).toMatch(new RegExp(`^${String(key.key_id)} +admin +default +metrics +`));
  });

  it('prints jobs as a table and as snake_case JSON without the workspace name', async () => {
    const repo = mkdtempSync(path.join(tmpdir(), 'ctx-repo-'));
    const started = await ctx(['index', repo, '--json']);
    expect(started.code, started.stderr).toBe(0);
    const job = JSON.parse(started.stdout) as Record<string, unknown>;
    expect(Object.keys(job).sort()).toEqual(['job_id', 'message', 'project_id', 'status']);

    const listed = JSON.parse((await ctx(['jobs', '--json'])).stdout) as {
      jobs: Record<string, unknown>[];
      total_count: number;
    };
    expect(listed).toMatchObject({
      total_count: 1,
      jobs: [expect.objectContaining({ job_id: job.job_id, repo_path: repo })],
    });

    const table = (await ctx(['jobs'])).stdout.trimEnd().split('\n');
    expect(table[0]).toMatch(/^JOB +STATUS +PROGRESS +FILES +CHUNKS +CREATED +REPOSITORY$/);
    expect(table[1]).toMatch(new RegExp(`^${String(job.job_id)} +pending +0% +0 +0 +\\S+ +${repo}$`));
  });

  it('prints annotation sessions as text, and as snake_case JSON with --json', async () => {
    const json = await ctx(['annotations', 'progress', sessionId, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      total_chunks: 2,
      annotated_chunks: 0,
      pending_chunks: 2,
      completion_percentage: 0,
      pending_chunk_ids: ['a', 'b'],
    });
    const text = await ctx(['annotations', 'progress', sessionId]);
    expect(text.stdout).toBe('annotated: 0 of 2 chunks (0%)\npending:   2: a, b\n');
  });

  it('shows why each result ranks where it does with search --explain, without --json', async () => {
    const found = await ctx(['search', 'lighthouse', '--explain']);
    expect(found.code, found.stderr).toBe(0);
    const lines = found.stdout.split('\n');
    expect(lines[0]).toMatch(/^1\. Lighthouse +\(notes:keeper, /);
    expect(lines[2]).toMatch(
      /^ {3}keyword #1 \(score -?\d+\.\d{3}, chunk \S+\); semantic: not ranked; shown: chunk \S+$/,
    );
  });
});

describe('ctx annotations start', () => {
  it('says which session it started', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'ctx-session-')), 'session.json');
    writeFileSync(file, JSON.stringify({ chunks: [{ chunk_id: 'c', position: 0, text: 'third' }] }));
    const started = await ctx(['annotations', 'start', file]);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/^Started session [0-9a-f-]{36} with 1 chunks\.\n$/);
  });
});

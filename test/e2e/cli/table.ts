import path from 'node:path';
import type { Group } from './runGroup.js';
import { mcpSession, serveSession } from './sessions.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../../../examples');
const json = <T>(stdout: string) => JSON.parse(stdout) as T;

const FIXTURE = {
  'docs/auth.md': '# Tokens\n\nAccess tokens are refreshed with a refresh token before they expire.\n',
  'src/refresh.ts': 'export const refresh = (token: string) => token; // refresh tokens\n',
};

/**
 * Every command of the built `ctx`, as a user runs it: arguments, environment, exit code and the
 * output that matters. Each group shares one working folder and data directory, in order. The
 * coverage spec fails when a command has no scenario here.
 */
export const GROUPS: Record<'documents' | 'work' | 'surfaces', Group> = {
  documents: {
    files: {
      ...FIXTURE,
      'notes.jsonl': '{"source_id":"n1","title":"Note one","body":"alice wrote about refresh tokens"}\n',
      'other.toml': '[storage]\ndata_dir = "./migrated"\n[embeddings]\nprovider = "none"\n',
    },
    scenarios: [
      { args: ['ingest', './docs', './src'], stdout: /^2 files: 2 new, 0 updated/ },
      { args: ['ingest', '--jsonl', 'notes.jsonl', '--source', 'notes'], stdout: /ingested 1 document/ },
      { args: ['ingest', '--jsonl', 'notes.jsonl'], code: 2, stderr: /--jsonl needs --source <name>/ },
      { args: ['ingest'], code: 2, stderr: /give paths to ingest, or the name of a configured source/ },
      {
        args: ['search', 'refresh', 'tokens', '--json'],
        stdout: /"source_id": "docs\/auth\.md"/,
        save: {
          documentId: (out) =>
            json<{ results: { id: string; source_id: string }[] }>(out).results.find(
              (r) => r.source_id === 'docs/auth.md',
            )!.id,
        },
      },
      { args: ['search', 'refresh', 'tokens'], stdout: /refresh\.ts {2}\(filesystem:src\/refresh\.ts, / },
      {
        args: ['search', 'refresh', '--mode', 'fuzzy'],
        code: 2,
        stderr: /Allowed choices are keyword, semantic, hybrid/,
      },
      {
        args: ['search', 'refresh', '--mode', 'hybrid'],
        code: 2,
        stderr: /need embeddings: the embeddings provider is "none"/,
      },
      { args: ['get', '{documentId}'], stdout: /Access tokens are refreshed/ },
      { args: ['get', 'not-a-document'], code: 2, stderr: /id must be a document uuid/ },
      {
        args: ['get', '{documentId}', '--as-of', '2999-01-01T00:00:00Z'],
        stdout: /^document: +[\w-]+\ntitle: +auth\.md\nsource: +filesystem:docs\/auth\.md\nversion: +1 \(stream revision \d+\)\nstate: +present\n/,
      },
      { args: ['sources'], stdout: /filesystem\s+2\s+healthy[\s\S]*notes\s+1/ },
      {
        args: ['history', '--backwards', '--limit', '5', '--json'],
        stdout: /"type": "DocumentIngested"/,
        save: { position: (out) => json<{ events: { position: string }[] }>(out).events.at(-1)!.position },
      },
      { args: ['history', 'doc-{documentId}'], stdout: /doc-[\w-]+ \(filesystem:docs\/auth\.md\) +#\d+ +DocumentIngested/ },
      // A date alone is not a moment: one message says what is.
      {
        args: ['history', '--since', '2026-11-29'],
        code: 2,
        stderr: /^ctx: Invalid input: since: expected an ISO 8601 time with Z or its UTC offset \(e\.g\. 2026-11-29T14:00:00Z\)\n$/,
      },
      // The positions `search --as-of` and `--cursor` take: as stored, and as the table shows them.
      {
        args: ['history', '--backwards', '--limit', '2'],
        stdout: /^POSITION +RECORDED +STREAM[^\n]*\n[1-9]\d*-[1-9]\d* +\d{4}-/,
        save: { compact: (out) => /\n(\d+-\d+) /.exec(out)![1]! },
      },
      {
        args: ['search', 'refresh', 'tokens', '--as-of', '{position}'],
        stdout: /auth\.md|refresh\.ts|No results/,
      },
      {
        args: ['search', 'refresh', 'tokens', '--as-of', '{compact}'],
        stdout: /auth\.md|refresh\.ts|No results/,
      },
      {
        args: ['history', '--backwards', '--limit', '1', '--cursor', '{compact}'],
        stdout: /^POSITION +RECORDED[\s\S]*\nMore: --cursor [1-9]\d*-[1-9]\d*\n$/,
      },
      {
        args: ['search', 'refresh', '--as-of', 'yesterday'],
        code: 2,
        stderr: /asOf: expected a position from the event history \(e\.g\. 779-1, or 0 for before the first event\) or an ISO 8601 time with Z or its UTC offset/,
      },
      // JavaScript's date parsing would take these for 2001 and for the machine's local time.
      { args: ['search', 'refresh', '--as-of', '3'], code: 2, stderr: /asOf: expected a position from the event history/ },
      { args: ['search', 'refresh', '--as-of', '2026-11-29T10:00'], code: 2, stderr: /asOf: expected a position/ },
      {
        args: ['audit', '--type', 'DocumentIngested', '--limit', '1', '--json'],
        save: { cursor: (out) => json<{ next_cursor: string }>(out).next_cursor },
      },
      { args: ['audit', '--type', 'DocumentIngested', '--cursor', '{cursor}'], stdout: /DocumentIngested/ },
      { args: ['projections', 'status'], stdout: /^NAME[\s\S]*\nkeyword +\d+ +\w+/ },
      { args: ['projections', 'rebuild', 'keyword'], stdout: /^rebuilt keyword from \d+ events/ },
      {
        args: ['projections', 'rebuild', 'nope'],
        code: 2,
        stderr: /No projection named 'nope'; projections: streams, /,
      },
      { args: ['forget', 'document', '{documentId}', '--reason', 'test'], stdout: /newly_forgotten: true/ },
      { args: ['get', '{documentId}', '--json'], stdout: /"forgotten": true/ },
      { args: ['get', '{documentId}'], stdout: /\n\(Its content was forgotten: `ctx history doc-<id>` shows when and why\.\)\n$/ },
      { args: ['forget', 'subject', 'alice@example.com'], stdout: /subject: +alice@example\.com/ },
      { args: ['backup', './ledger.ctxbak'], stdout: /^backed up \d+ events .* to \.\/ledger\.ctxbak/ },
      {
        args: ['restore', './ledger.ctxbak', '--data-dir', './restored'],
        stdout: /^restored \d+ events .* into \.\/restored/,
      },
      {
        args: ['restore', './ledger.ctxbak'],
        code: 2,
        stderr: /is not empty: restore into a new directory, or pass --force/,
      },
      { args: ['restore', './ledger.ctxbak', '--force'], stdout: /^restored \d+ events/ },
      {
        args: ['migrate', '--to', 'other.toml'],
        stdout: /^Copied \d+ events \(\d+ read\) into other\.toml; rebuilt /,
      },
      { args: ['sources', '--data-dir', './migrated'], stdout: /filesystem\s+2/ },
    ],
  },

  work: {
    env: {
      CTX_AUTH__JWT_SECRET: 'a-secret-of-at-least-32-characters!',
      CTX_EXTENSIONS__CONNECTORS_DIR: path.join(EXAMPLES, 'connectors'),
    },
    files: {
      ...FIXTURE,
      'repo/auth.md': FIXTURE['docs/auth.md'],
      'batch.json': '[{"chunkId":"no-such-chunk","categories":["fee_schedule"]}]',
    },
    scenarios: [
      { args: ['index', './repo', '--follow'], stdout: /status: +completed/ },
      {
        args: ['index', './repo', '--json'],
        stdout: /"status": "pending"/,
        save: { jobId: (out) => json<{ job_id: string }>(out).job_id },
      },
      { args: ['jobs'], stdout: /pending +0%[\s\S]*completed +100% +1 +1/ },
      { args: ['jobs', 'show', '{jobId}'], stdout: /status: +pending/ },
      { args: ['jobs', 'cancel', '{jobId}'], stdout: /: cancelled\. Job cancelled successfully/ },
      { args: ['jobs', 'history', '{jobId}'], stdout: /IndexingJobRequested[\s\S]*IndexingJobCancelled/ },
      { args: ['jobs', 'cancel', '{jobId}'], code: 1, stderr: /cancel/i },
      {
        args: ['jobs', 'retry', '{jobId}', '--json'],
        stdout: /"retry_of": "[0-9a-f-]{36}"/,
        save: { retryId: (out) => json<{ job_id: string }>(out).job_id },
      },
      { args: ['jobs', 'retry', '{retryId}'], code: 1, stderr: /Only failed or cancelled jobs can be retried/ },
      { args: ['jobs', 'cancel', '{retryId}'], stdout: /: cancelled\./ },
      {
        args: ['annotations', 'start', '--query', 'tokens', '--name', 'review', '--json'],
        stdout: /"chunk_count": 1/,
        save: { sessionId: (out) => json<{ session_id: string }>(out).session_id },
      },
      {
        args: ['annotations', 'progress', '{sessionId}', '--json'],
        save: { chunkId: (out) => json<{ pending_chunk_ids: string[] }>(out).pending_chunk_ids[0]! },
      },
      {
        args: [
          'annotations',
          'annotate',
          '{sessionId}',
          '{chunkId}',
          '--category',
          'fee_schedule',
          '--label',
          'Fee Schedule',
        ],
        stdout: /categories: fee_schedule/,
      },
      {
        args: ['annotations', 'annotate', '{sessionId}', '{chunkId}', '--category', 'nonsense'],
        code: 2,
        stderr: /fee_schedule/,
      },
      { args: ['annotations', 'progress', '{sessionId}'], stdout: /^annotated: 1 of 1 chunks \(100%\)/ },
      {
        args: ['annotations', 'export', '{sessionId}', '--json'],
        stdout: /"categories": \[\s*"fee_schedule"\s*\]/,
      },
      {
        args: ['annotations', 'history', '{sessionId}'],
        stdout: /AnnotationSessionStarted[\s\S]*ChunkAnnotated/,
      },
      {
        args: ['annotations', 'diff', '{sessionId}', '--from', '0'],
        stdout: /^\+ .*categories: \[\] -> \["fee_schedule"\]/,
      },
      { args: ['annotations', 'annotate-batch', '{sessionId}', 'batch.json'], stdout: /^0 annotated, 1 failed\n {2}no-such-chunk: / },
      { args: ['annotations', 'rename', '{sessionId}', 'fee review'], stdout: /^Renamed session .* to fee review\./ },
      {
        args: ['keys', 'create', '--scopes', 'search:read index:read', '--tenant', 'acme', '--json'],
        stdout: /"key_id"/,
        save: { keyId: (out) => json<{ key_id: string }>(out).key_id },
      },
      { args: ['keys', 'list'], stdout: /search:read,index:read +acme/ },
      { args: ['keys', 'revoke', '{keyId}'], stdout: /^revoked / },
      { args: ['keys', 'list', '--json'], stdout: /"revoked": true/ },
      {
        args: ['tokens', '--subject', 'alice', '--scopes', 'search:read'],
        stdout: /access token: +eyJ[\s\S]*refresh token: +rt\.[\s\S]*family: +[0-9a-f-]{36}/,
        save: { familyId: (out) => /family: +([0-9a-f-]{36})/.exec(out)![1]! },
      },
      { args: ['tokens', 'revoke', '{familyId}', '--reason', 'test'], stdout: /^revoked [0-9a-f-]{36}/ },
      { args: ['sync', 'release_feed'], stdout: /^synced release_feed: 3 documents in 2 pages \(3 created/ },
      { args: ['sync', 'release_feed'], stdout: /0 created/ },
      { args: ['sync', 'nope'], code: 1, stderr: /No Lua connector named 'nope'/ },
    ],
  },

  surfaces: {
    files: FIXTURE,
    scenarios: [
      { args: ['--version'], stdout: /^\d+\.\d+\.\d+\n$/ },
      { args: ['--help'], stdout: /^Usage: ctx \[options\] \[command\]/ },
      { args: ['help', 'search'], stdout: /^Usage: ctx search/ },
      { args: ['frobnicate'], code: 2, stderr: /unknown command 'frobnicate'/ },
      { args: ['projections'], code: 2, stderr: /Usage: ctx projections[\s\S]*rebuild[\s\S]*status/ },
      { args: ['annotations'], code: 2, stderr: /Usage: ctx annotations[\s\S]*diff[\s\S]*start/ },
      { args: ['keys'], code: 2, stderr: /Usage: ctx keys[\s\S]*create[\s\S]*list/ },
      { args: ['forget'], code: 2, stderr: /Usage: ctx forget[\s\S]*document[\s\S]*subject/ },
      { args: ['model'], code: 2, stderr: /Usage: ctx model[\s\S]*fetch/ },
      { args: ['model', 'fetch', '--help'], stdout: /--weights/ },
      {
        args: [
          'model',
          'fetch',
          '--hub',
          'http://127.0.0.1:59999',
          '--maven',
          'http://127.0.0.1:59999',
          '--model-dir',
          './models',
        ],
        code: 1,
        stderr: /could not serve .*Maven Central could not serve it either/,
      },
      {
        args: ['tokens', '--subject', 'alice', '--scopes', 'search:read'],
        code: 1,
        stderr: /set auth\.jwt_secret/,
      },
      { args: ['serve', '--bind', '127.0.0.1:0'], session: serveSession },
      { args: ['serve', 'mcp', '--bind', '127.0.0.1:0'], session: serveSession },
      { args: ['serve', 'nope'], code: 2, stderr: /Allowed choices are mcp/ },
      { args: ['mcp'], session: mcpSession },
      {
        args: ['mcp', '--toolsets', 'nope'],
        code: 2,
        stderr: /mcp\.toolsets\[0\]: Invalid option: .*\(from --toolsets\)/,
      },
      // Last: the ctx.toml it writes is read by every later command in this folder.
      { args: ['init'], stdout: /^wrote .*ctx\.toml/ },
      { args: ['init'], code: 2, stderr: /ctx\.toml exists; --force replaces it/ },
      { args: ['init', '--force'], stdout: /^wrote / },
      { args: ['init', '--config', './no-such-folder/ctx.toml'], code: 2, stderr: /^ctx: Cannot write \.\/no-such-folder\/ctx\.toml: ENOENT/ },
    ],
  },
};

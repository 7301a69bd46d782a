import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger, startServer } from '../../src/main.js';
import { annotationsModule } from '../../src/modules/annotationsModule.js';
import { accessModule } from '../../src/modules/accessModule.js';
import { settingsModule } from '../../src/modules/settingsModule.js';
import { ledgerModule } from '../../src/modules/ledgerModule.js';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';

describe('annotations over REST', () => {
  it('serves the session routes with the same operations, and errors in the HTTP error format', async () => {
    const ledger = await openLedger(
      loadConfig({
        env: {},
        overrides: { storage: { dataDir: tempDataDir() }, server: { bind: '127.0.0.1:0' } },
      }),
      { logger: pino({ level: 'silent' }), modules: [ledgerModule, annotationsModule, settingsModule, accessModule] },
    );
    const server = await startServer(ledger);
    const inject = (method: 'GET' | 'POST', url: string, payload?: object) =>
      server.app.inject({ method, url: `/api/v1/annotations/sessions${url}`, payload });
    try {
      const created = await inject('POST', '', {
        config: { chunks: [0, 1].map((i) => ({ chunk_id: `c${i}`, position: i, text: '' })) },
      });
      expect(created.statusCode).toBe(201);
      const { sessionId } = created.json<{ sessionId: string }>();
      expect(
        (await inject('POST', `/${sessionId}/annotations`, { chunkId: 'c0', tags: ['t'] })).json(),
      ).toMatchObject({ tags: ['t'] });
      const batch = await inject('POST', `/${sessionId}/annotations/batch`, {
        annotations: [{ chunkId: 'c1' }, { chunkId: 'x' }],
      });
      expect(batch.json()).toMatchObject({ successCount: 1, errorCount: 1 });
      expect(
        (
          await inject('POST', `/${sessionId}/relations`, {
            sourceChunkId: 'c0',
            targetChunkId: 'c1',
            relationType: 'references',
          })
        ).statusCode,
      ).toBe(200);
      expect((await inject('GET', `/${sessionId}/progress`)).json()).toMatchObject({
        completionPercentage: 100,
      });
      const history = (await inject('GET', `/${sessionId}/history?chunkId=c0&limit=10`)).json<{
        events: { position: string }[];
      }>();
      const first = history.events[0]!.position;
      expect(
        (await inject('GET', `/${sessionId}/export?asOf=${first}`)).json<{ chunks: { tags: string[] }[] }>()
          .chunks[0]!.tags,
      ).toEqual([]);
      expect(
        (await inject('GET', `/${sessionId}/diff?from=${first}`)).json<{ added: unknown[] }>().added,
      ).toHaveLength(2);
      const missing = await inject('GET', `/${crypto.randomUUID()}/progress`);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ error: { code: 'not_found' } });
      expect((await inject('POST', '', { config: { chunks: [] } })).statusCode).toBe(400);
      // A route whose module this deployment leaves out says so, in the API's error format.
      const forget = await server.app.inject({ method: 'POST', url: '/api/v1/forget', payload: { subject: 'bob' } });
      expect(forget.statusCode).toBe(503);
      expect(forget.json<{ error: { detail: string } }>().error.detail).toMatch(/not available in this deployment/);
    } finally {
      await server.close();
    }
  });
});

describe('ctx annotations', () => {
  // Each step below is a CLI process of its own: a slow machine needs more than the default time.
  it('starts, annotates, reports, exports, lists history and diffs', async () => {
    const dataDir = tempDataDir();
    const file = path.join(dataDir, 'session.json');
    writeFileSync(
      file,
      JSON.stringify({
        chunks: [
          { chunk_id: 'a', position: 0, text: 'A' },
          { chunk_id: 'b', position: 1, text: 'B' },
        ],
      }),
    );
    const ctx = async (...args: string[]) => {
      const { code, stdout, stderr } = await runCtx(['annotations', ...args, '--json', '--data-dir', dataDir]);
      expect(code, stderr).toBe(0);
      return JSON.parse(stdout) as Record<string, unknown>;
    };
    const { session_id: sessionId } = (await ctx('start', file)) as { session_id: string };
    await ctx(
      'annotate',
      sessionId,
      'a',
      '--category',
      'fee_schedule',
      '--subtype',
      'fee_schedule=participant_fee',
    );
    expect(await ctx('progress', sessionId)).toMatchObject({ annotated_chunks: 1, pending_chunk_ids: ['b'] });
    const exported = (await ctx('export', sessionId)) as { chunks: { subtypes: object }[] };
    expect(exported.chunks[0]!.subtypes).toEqual({ fee_schedule: 'participant_fee' });
    const history = (await ctx('history', sessionId, '--chunk', 'a')) as {
      events: { type: string; position: string }[];
    };
    expect(history.events.map((e) => e.type)).toEqual(['SessionChunksAdded', 'ChunkAnnotated']);
    const diff = (await ctx('diff', sessionId, '--from', history.events[0]!.position)) as {
      added: { chunk_id: string }[];
    };
    expect(diff.added.map((d) => d.chunk_id)).toEqual(['a']);
    const bad = await runCtx([
      'annotations',
      'annotate',
      sessionId,
      'a',
      '--category',
      'nope',
      '--data-dir',
      dataDir,
    ]);
    expect(bad.code).toBe(2);
  }, 180_000);
});

import { afterAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';

const context = { actor: { subject: 't', tenant: null, via: 'system' as const }, correlationId: crypto.randomUUID(), project: 'default' };

/** A write whose read models have not applied it when the answer goes out: stored, and said so. */
describe('a write answered before its read models apply it', () => {
  let ledger: Ledger | undefined;
  afterAll(() => ledger?.close());

  it('says it is accepted at its ledger position and still settling, and reads show it once they apply it', async () => {
    // Opened but not started: no read model runs, as while a replica that runs them is away.
    ledger = await openTestLedger({ CTX_EMBEDDINGS__PROVIDER: 'none' });
    const answer = (await ledger.operation('documents.ingest_batch').run(
      { source: 'notes', documents: [{ source_id: 'a.md', body: 'settling writes are stored all the same' }] },
      context,
    )) as { results: { outcome: string }[]; settling?: { position: string; message: string } };
    expect(answer.results).toEqual([expect.objectContaining({ outcome: 'created' })]);
    expect(answer.settling?.position).toBe(await ledger.store.headPosition());
    expect(answer.settling?.message).toMatch(/^Accepted at ledger position \S+; the '\w+' read model has yet to apply it/);

    await ledger.start();
    await ledger.catchUp();
    const found = (await ledger.operation('search').run({ query: 'settling writes', mode: 'keyword' }, context)) as {
      results: { source_id: string }[];
    };
    expect(found.results.map((r) => r.source_id)).toEqual(['a.md']);
  });
});

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/main.js';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { openTestLedger } from '../support/ledger.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples');
const context = (): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

describe('a Lua connector synced into the index', () => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await openTestLedger({
      CTX_EMBEDDINGS__PROVIDER: 'none',
      CTX_EXTENSIONS__CONNECTORS_DIR: path.join(EXAMPLES, 'connectors'),
      CTX_EXTENSIONS__TOOLS_DIR: path.join(EXAMPLES, 'tools'),
    });
    await ledger.start();
  }, 60_000);
  afterAll(async () => ledger.close());

  it('ingests every page through the ingest command, so search finds it, and syncs nothing twice', async () => {
    const first = await ledger.operation('extensions.sync').run({ name: 'release_feed' }, context());
    expect(first).toMatchObject({ documents: 3, created: 3 });
    await ledger.catchUp();
    const { results } = (await ledger.operation('search').run({ query: 'hybrid search' }, context())) as {
      results: { source: string; source_id: string }[];
    };
    expect(results[0]).toMatchObject({ source: 'release_feed', source_id: '1.1.0' });
    const second = await ledger.operation('extensions.sync').run({ name: 'release_feed' }, context());
    expect(second).toMatchObject({ created: 0 });
  });

  it('lets a Lua tool call the real search through ctx.search', async () => {
    const output = await ledger.operation('related_titles').run({ topic: 'Lua tools' }, context());
    expect(JSON.stringify(output)).toContain('1.2.0');
  });
});

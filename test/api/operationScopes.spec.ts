import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, WRITE_SCOPES } from '../../src/domain/auth.js';
import type { Ledger } from '../../src/main.js';
import { requiredScope } from '../../src/operations.js';
import { openTestLedger } from '../support/ledger.js';

describe('the scopes of the operation catalogue', () => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await openTestLedger();
  });
  afterAll(() => ledger.close());

  it('gives every operation that writes a write scope', () => {
    const writers = ledger.operations().filter((o) => o.writes);
    expect(writers.map((o) => o.name)).toEqual(expect.arrayContaining(['documents.ingest', 'documents.ingest_batch', 'start_indexing_background']));
    const withoutWriteScope = writers
      .filter((o) => !(WRITE_SCOPES as readonly string[]).includes(o.writeScope ?? o.scope ?? ''))
      .map((o) => `${o.name} (${o.writeScope ?? o.scope ?? 'none'})`);
    expect(withoutWriteScope).toEqual([]);
  });

  it('asks a caller of a writing operation for a write scope, unless the operation checks it per action', () => {
    const readScoped = ledger
      .operations()
      .filter((o) => o.writes && !o.writeScope && !(WRITE_SCOPES as readonly string[]).includes(requiredScope(o)))
      .map((o) => o.name);
    expect(readScoped).toEqual([]);
  });

  it('names only scopes that exist', () => {
    const unknown = ledger
      .operations()
      .flatMap((o) => [requiredScope(o), ...(o.writeScope ? [o.writeScope] : [])])
      .filter((scope) => !(SCOPES as readonly string[]).includes(scope));
    expect(unknown).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/main.js';
import { MODULES } from '../../src/modules/index.js';
import type { OperationSurfaces } from '../../src/operations.js';
import { openTestLedger } from '../support/ledger.js';

const withSurfaces = (operations: readonly OperationSurfaces[]) =>
  operations
    .filter((operation) => operation.rest || operation.cli)
    .map(({ name, rest, cli }) => ({ name, rest, cli }))
    .sort((a, b) => a.name.localeCompare(b.name));

describe('the surfaces a module declares before any ledger opens', () => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await openTestLedger();
  });
  afterAll(() => ledger.close());

  it('are exactly those of the operations it mounts: every route and verb is served, none differs', () => {
    expect(ledger.parts).toHaveLength(MODULES.length);
    MODULES.forEach((module, i) => {
      expect(withSurfaces(module.surfaces ?? []), module.name).toEqual(withSurfaces(ledger.parts[i]!.operations ?? []));
    });
  });
});

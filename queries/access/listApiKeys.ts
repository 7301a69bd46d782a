import { z } from 'zod';
import { ScopeSchema } from '../../src/domain/auth.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { ReadModels } from '../../src/ports/projections.js';
import { API_KEYS, type ApiKeyRow } from '../../src/domain/apiKeyView.js';

export const ListApiKeysOutputSchema = z.object({
  keys: z.array(
    z.object({
      keyId: z.string(),
      scopes: z.array(ScopeSchema),
      tenant: z.string(),
      label: z.string().nullable(),
      revoked: z.boolean(),
      createdAt: z.string(),
      createdBy: z.string(),
    }),
  ),
});

/** How many keys one answer lists. */
const MAX_KEYS = 1000;

type ListedKey = z.output<typeof ListApiKeysOutputSchema>['keys'][number];

export const listApiKeysSurfaces = {
  name: 'keys.list',
  cli: {
    command: ['keys', 'list'],
    description: 'list API keys (ids, scopes, tenants; never the keys)',
    catchUp: API_KEYS,
    shown: ({ keys }: z.output<typeof ListApiKeysOutputSchema>) => keys,
    print: {
      table: {
        columns: {
          'key id': '{keyId}',
          scopes: (k: ListedKey) => k.scopes.join(','),
          tenant: '{tenant}',
          label: '{label}',
          created: '{createdAt}',
          by: '{createdBy}',
          revoked: (k: ListedKey) => (k.revoked ? 'revoked' : ''),
        },
        empty: 'No API keys.',
      },
    },
  },
} as const satisfies OperationSurfaces;

/** `keys.list`: ids, scopes and tenants of API keys, never the keys or their hashes. */
export const listApiKeysOperation = (readModels: ReadModels) =>
  defineOperation({
    ...listApiKeysSurfaces,
    title: 'List API keys',
    description: 'Lists API keys with their ids, scopes, tenants and labels; never the keys themselves.',
    toolset: 'admin',
    scope: 'admin',
    writes: false,
    input: z.object({}).strict(),
    output: ListApiKeysOutputSchema,
    // A tenant's administrator sees its own tenant's keys.
    run: async (_input, { actor }) => {
      const { items } = await readModels.find<ApiKeyRow>(API_KEYS, {
        ...(actor.tenant ? { where: { tenant: actor.tenant } } : {}),
        limit: MAX_KEYS,
      });
      return { keys: items.map(({ hash: _hash, ...row }) => ({ ...row, scopes: row.scopes as never })) };
    },
  });

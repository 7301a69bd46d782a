import { defineConfig } from 'vitest/config';

/**
 * The fast tier: pure tests only (deciders, projections on the in-memory event store, parsers, the
 * contract suite of the in-memory store): no database, no server, no model; seconds. `npm test`
 * runs these too, with everything else.
 */
export default defineConfig({
  test: {
    include: ['**/*.unit.spec.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    pool: 'threads',
    maxWorkers: 2,
    globalSetup: ['test/support/tempRoot.ts'],
  },
});

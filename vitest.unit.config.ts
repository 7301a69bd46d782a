import { defineConfig } from 'vitest/config';

/** Pure tests only (deciders, projections, parsers): no database, no server, no model; seconds. */
export default defineConfig({
  test: {
    include: ['**/*.unit.spec.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    pool: 'threads',
    maxWorkers: 2,
  },
});

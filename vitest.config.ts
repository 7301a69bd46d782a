import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.spec.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    // PGlite instances are heavy; two workers fit the two cores this project is sized for.
    pool: 'forks',
    maxWorkers: 2,
    // Everything tests write under os.tmpdir() goes in one directory, removed after the run.
    globalSetup: ['test/support/tempRoot.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

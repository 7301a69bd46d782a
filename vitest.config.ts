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
    // Guards against a hang, not a speed check: a test that spawns `ctx` a few times (each opens the
    // embedded database, 5 to 8 s on a loaded two-core machine) takes a minute there.
    testTimeout: 180_000,
    hookTimeout: 240_000,
  },
});

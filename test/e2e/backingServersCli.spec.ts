import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { testPostgresUrl } from '../support/postgres.js';
import { describeWith, POSTGRES_SERVER } from '../support/requirements.js';

describeWith(POSTGRES_SERVER, 'a PostgreSQL server that refuses the configured connection, from outside', () => {
  /** The test server's URL with another role or database. */
  const urlWith = (change: (url: URL) => void) => {
    const url = new URL(testPostgresUrl()!);
    change(url);
    return url.toString();
  };

  it.each([
    {
      refused: 'a role it does not know',
      url: () => urlWith((url) => (url.username = 'no_such_role_for_ctx')),
      reason: 'role "no_such_role_for_ctx" does not exist (SQLSTATE 28000)',
    },
    {
      refused: 'a database it does not have',
      url: () => urlWith((url) => (url.pathname = '/no_such_database_for_ctx')),
      reason: 'database "no_such_database_for_ctx" does not exist (SQLSTATE 3D000)',
    },
  ])('ctx says the server refused $refused, and which setting to mend, without a stack trace', async ({ url, reason }) => {
    for (const args of [['search', 'lighthouse'], ['serve', '--bind', '127.0.0.1:0']]) {
      const run = await runCtx(args, { CTX_STORAGE__POSTGRES_URL: url(), CTX_EMBEDDINGS__PROVIDER: 'none', ...tempRootsEnv() });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(
        `ctx: The PostgreSQL server refused the connection: ${reason}. Set storage.postgres_url to a role, password and database it accepts`,
      );
      expect(run.stderr).not.toMatch(/^\s+at /m);
    }
  });
});

describe('an EventStoreDB that cannot be reached, from outside', () => {
  /** A port nothing listens on: one just given up by the system. */
  const closedPort = () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });

  it('ctx says where to look, not only the client\'s error name', async () => {
    const env = {
      CTX_STORAGE__EVENT_STORE: 'eventstoredb',
      CTX_STORAGE__EVENTSTORE_URL: `kurrentdb://127.0.0.1:${await closedPort()}?tls=false`,
      CTX_EMBEDDINGS__PROVIDER: 'none',
      ...tempRootsEnv(),
    };
    const run = await runCtx(['search', 'lighthouse', '--data-dir', tempDataDir()], env);
    expect(run.code, run.stderr).toBe(1);
    // Before: "EventStoreDB is unavailable: UnavailableError".
    expect(run.stderr).toContain(
      'ctx: EventStoreDB is unavailable: no connection could be made (UnavailableError); check that the server runs ' +
        'and that storage.eventstore_url reaches it',
    );
  });
});

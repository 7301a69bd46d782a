import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger } from '../../src/main.js';
import { createTestDatabase, testPostgresUrl } from '../../test/support/postgres.js';
import { connectPostgres } from '../postgres/database.js';
import { missingExtensions } from './postgresExtensions.js';
import { describeWith, POSTGRES_SERVER } from '../../test/support/requirements.js';

describe('Postgres extensions a configuration needs', () => {
  const none = new Set<string>();

  it('names pg_textsearch and the keyword index setting when BM25 cannot run in Postgres', () => {
    const [problem, ...rest] = missingExtensions(
      { keywordIndex: 'pg_textsearch', embeddingsProvider: 'none' },
      none,
    );
    expect(rest).toEqual([]);
    expect(problem).toContain('"pg_textsearch"');
    expect(problem).toContain('search.keyword_index = "meilisearch"');
  });

  it('names pgvector and the embeddings setting when vectors cannot be stored', () => {
    const problems = missingExtensions({ keywordIndex: 'meilisearch', embeddingsProvider: 'local' }, none);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('"vector" (pgvector)');
    expect(problems[0]).toContain('embeddings.provider = "none"');
  });

  it('asks for nothing the configuration does not use, or the server has', () => {
    expect(missingExtensions({ keywordIndex: 'meilisearch', embeddingsProvider: 'none' }, none)).toEqual([]);
    const both = new Set(['vector', 'pg_textsearch']);
    expect(missingExtensions({ keywordIndex: 'pg_textsearch', embeddingsProvider: 'http' }, both)).toEqual(
      [],
    );
  });
});

const serverUrl = testPostgresUrl();
if (serverUrl) {
  describe('start-up on a PostgreSQL server', () => {
    const openOn = async (env: Record<string, string>) => {
      const database = await createTestDatabase(serverUrl, 'ctx_extensions');
      const config = loadConfig({ env: { CTX_STORAGE__POSTGRES_URL: database.url, ...env } });
      try {
        const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
        await ledger.close();
        return null;
      } catch (error) {
        return error as Error;
      } finally {
        await database.drop();
      }
    };

    it('refuses to start without an extension it needs, naming the extension and the setting to change', async () => {
      const db = connectPostgres(serverUrl, { max: 1 });
      const available = await db.availableExtensions().finally(() => db.close());
      const error = await openOn({ CTX_EMBEDDINGS__PROVIDER: 'local' });
      if (available.has('pg_textsearch') && available.has('vector')) {
        expect(error).toBeNull();
        return;
      }
      expect(error?.message).toMatch(/pg_textsearch|pgvector/);
      if (!available.has('pg_textsearch'))
        expect(error?.message).toContain('search.keyword_index = "meilisearch"');
      if (!available.has('vector')) expect(error?.message).toContain('embeddings.provider = "none"');
    });

    it('starts on a plain server when search uses Meilisearch and embeddings are off', async () => {
      const error = await openOn({
        CTX_EMBEDDINGS__PROVIDER: 'none',
        CTX_SEARCH__KEYWORD_INDEX: 'meilisearch',
        CTX_SEARCH__MEILISEARCH_URL: 'http://127.0.0.1:7700',
      });
      expect(error).toBeNull();
    });
  });
} else {
  describeWith(POSTGRES_SERVER, 'start-up on a PostgreSQL server', () => undefined);
}

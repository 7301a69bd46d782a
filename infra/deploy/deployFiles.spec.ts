import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const here = import.meta.dirname;

describe('deployment files', () => {
  it('ships a production configuration that loads and points at EventStoreDB, Meilisearch and PostgreSQL', () => {
    const config = loadConfig({
      file: path.join(here, 'ctx.production.toml'),
      env: { CTX_SEARCH__MEILISEARCH_API_KEY: 'key' },
    });
    expect(config.storage).toMatchObject({
      eventStore: 'eventstoredb',
      eventstoreUrl: 'kurrentdb://eventstore:2113?tls=false',
    });
    expect(config.storage.postgresUrl).toMatch(/^postgres:\/\/.*@postgres:5432\/ctx$/);
    expect(config.search).toMatchObject({
      keywordIndex: 'meilisearch',
      meilisearchUrl: 'http://meilisearch:7700',
      meilisearchApiKey: 'key',
    });
    expect(config.server.bind).toBe('0.0.0.0:7331');
    expect(config.server.allowedHosts).toEqual(['context-ledger']);
  });

  it('pins every image of the compose file and mounts the production configuration', () => {
    const compose = readFileSync(path.join(here, 'compose.yaml'), 'utf8');
    const images = [...compose.matchAll(/^\s+image:\s*(\S+)/gm)].map((m) => m[1]!);
    expect(images).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^eventstore\/eventstore:\d/),
        expect.stringMatching(/^getmeili\/meilisearch:v\d/),
        expect.stringMatching(/^pgvector\/pgvector:\d/),
      ]),
    );
    expect(images.some((image) => !image.includes(':') || image.endsWith(':latest'))).toBe(false);
    expect(compose).toContain('./ctx.production.toml:/etc/ctx/ctx.toml:ro');
    // The image writes only to its /data volume, and every replica seals with the same key.
    expect(compose).toContain('ctx-data:/data');
    expect(compose).toMatch(/CTX_AUTH__SECRETS_KEY: \$\{CTX_SECRETS_KEY:\?/);
  });

  it('refuses an event store or keyword index setting without the server it needs', () => {
    expect(() => loadConfig({ env: { CTX_STORAGE__EVENT_STORE: 'eventstoredb' } })).toThrow(/eventstore_url/);
    expect(() => loadConfig({ env: { CTX_SEARCH__KEYWORD_INDEX: 'meilisearch' } })).toThrow(
      /meilisearch_url/,
    );
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, ConfigSchema, discoverConfigFile, loadConfig } from '../src/config.js';
import { configTemplate, STARTER_VOCABULARY } from '../src/configTemplate.js';

const tomlFile = (text: string) => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'ctx-config-')), 'ctx.toml');
  writeFileSync(file, text);
  return file;
};

describe('loadConfig', () => {
  it('gives the embedded default with no file and no environment', () => {
    const config = loadConfig({ env: {} });
    expect(config.server.bind).toBe('127.0.0.1:7331');
    expect(config.storage.dataDir).toBe('./.ctx');
    expect(config.storage.postgresUrl).toBeUndefined();
  });

  it('reads ctx.toml with snake_case keys, then environment, then command-line overrides', () => {
    const file = tomlFile('[server]\nbind = "127.0.0.1:8000"\n[storage]\ndata_dir = "/var/ctx"\n[projections]\nbatch_size = 100\n');
    const config = loadConfig({
      file,
      env: { CTX_PROJECTIONS__BATCH_SIZE: '250', CTX_SERVER__BIND: '0.0.0.0:9000' },
      overrides: { server: { bind: '127.0.0.1:9100' } },
    });
    expect(config.storage.dataDir).toBe('/var/ctx');
    expect(config.projections.batchSize).toBe(250);
    expect(config.server.bind).toBe('127.0.0.1:9100');
  });

  it('lists every bad setting in one error', () => {
    const file = tomlFile('[server]\nbind = "nowhere"\nunknown = 1\n[projections]\nbatch_size = 0\n');
    let error: unknown;
    try {
      loadConfig({ file, env: { CTX_LOG__LEVEL: 'loud' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/server\.bind: expected host:port/);
    expect(problems).toMatch(/server\.unknown: not a setting of \[server\]/);
    expect(problems).toMatch(/projections\.batch_size/);
    expect(problems).toMatch(/log\.level/);
  });

  it('names each bad setting as written in ctx.toml, and the file, variable or flag that set it', () => {
    const file = tomlFile('[server]\nbody_limit_bytes = 0\n[embeddings]\nbatch_sise = 8\n');
    let error: unknown;
    try {
      loadConfig({
        file,
        env: { CTX_PROJECTIONS__BATCH_SIZE: 'lots', CTX_SEARCH__AS_OF_CACHE: '-1' },
        overrides: { server: { bind: 'nowhere' } },
        flags: { 'server.bind': '--bind' },
      });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual([
      expect.stringMatching(new RegExp(`^server\\.bind: expected host:port.* \\(from --bind\\)$`)),
      `server.body_limit_bytes: Too small: expected number to be >0 (in ${file})`,
      'projections.batch_size: expected a number, got "lots" (from CTX_PROJECTIONS__BATCH_SIZE)',
      `embeddings.batch_sise: not a setting of [embeddings] (did you mean embeddings.batch_size?) (in ${file})`,
      expect.stringMatching(/^search\.as_of_cache: .* \(from CTX_SEARCH__AS_OF_CACHE\)$/),
    ]);
  });

  it('suggests the setting or section a misspelt one most likely meant, and none for a stranger', () => {
    const file = tomlFile('[serch]\ndefault_limit = 5\n[search]\ndefalt_limit = 5\n[zzz]\nq = 1\n');
    let error: unknown;
    try {
      loadConfig({ file, env: {} });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual([
      `search.defalt_limit: not a setting of [search] (did you mean search.default_limit?) (in ${file})`,
      `serch: not a setting (did you mean [search]?) (in ${file})`,
      `zzz: not a setting (in ${file})`,
    ]);
  });

  it('finds ctx.toml in the working directory, when there is one', () => {
    const file = tomlFile('[server]\nbind = "127.0.0.1:8000"\n');
    expect(discoverConfigFile(path.dirname(file))).toBe(file);
    expect(discoverConfigFile(mkdtempSync(path.join(tmpdir(), 'ctx-config-')))).toBeUndefined();
  });

  it('reads the hosts connectors may reach from the file or the environment, and refuses what is not a host', () => {
    const file = tomlFile('[connectors]\nallowed_hosts = ["GitHub.Example.com", "minio.internal:9000", "*.corp.example", "[fd00::1]"]\n');
    expect(loadConfig({ file, env: {} }).connectors).toEqual({
      allowedHosts: ['github.example.com', 'minio.internal:9000', '*.corp.example', '[fd00::1]'],
      allowPrivateAddresses: false,
    });
    const env = { CTX_CONNECTORS__ALLOWED_HOSTS: '127.0.0.1, jira.internal', CTX_CONNECTORS__ALLOW_PRIVATE_ADDRESSES: 'true' };
    expect(loadConfig({ env }).connectors).toEqual({ allowedHosts: ['127.0.0.1', 'jira.internal'], allowPrivateAddresses: true });
    for (const bad of ['https://github.example.com', 'github.example.com/api', 'user@host', '2130706433'])
      expect(() => loadConfig({ env: { CTX_CONNECTORS__ALLOWED_HOSTS: bad } }), bad).toThrow(/connectors\.allowed_hosts\[0\]: expected a host/);
  });

  it('writes a template for ctx init that loads as the defaults, but for a generic annotation vocabulary', () => {
    const file = tomlFile(configTemplate());
    const defaults = loadConfig({ env: {} });
    expect(loadConfig({ file, env: {} })).toEqual({ ...defaults, annotations: STARTER_VOCABULARY });
    expect(configTemplate()).toMatch(/^body_limit_bytes = 4194304 +# /m);
    expect(configTemplate()).not.toMatch(/fee_schedule|Fee Schedule/);
  });

  it('names every setting in the template, set or commented out, but the older name of ingest.roots', () => {
    const template = configTemplate();
    const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const objectOf = (schema: unknown): z.ZodObject | null => {
      let at = schema as { _zod?: { def?: { innerType?: unknown } } };
      while (!(at instanceof z.ZodObject) && at._zod?.def?.innerType) at = at._zod.def.innerType;
      return at instanceof z.ZodObject ? at : null;
    };
    const missing: string[] = [];
    for (const [section, schema] of Object.entries(ConfigSchema.shape)) {
      const fields = objectOf(schema);
      if (!fields) continue; // [sources.*]: named tables, shown as an example
      const body = template.split(`\n[${section}]`)[1]?.split('\n[')[0] ?? '';
      for (const key of Object.keys(fields.shape).map(snake)) {
        if (`${section}.${key}` === 'api.connectors_root') continue;
        if (!new RegExp(`^(# )?${key} = `, 'm').test(body)) missing.push(`${section}.${key}`);
      }
    }
    expect(missing).toEqual([]);
    expect(template).not.toMatch(/connectors_root/);
  });

  it('names the file when it is not valid TOML', () => {
    const file = tomlFile('[server\nbind=');
    expect(() => loadConfig({ file, env: {} })).toThrow(new RegExp(`${path.basename(file)}`));
  });
});

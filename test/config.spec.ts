import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

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
    expect(problems).toMatch(/server: Unrecognized key.*unknown/);
    expect(problems).toMatch(/projections\.batchSize/);
    expect(problems).toMatch(/log\.level/);
  });

  it('names the file when it is not valid TOML', () => {
    const file = tomlFile('[server\nbind=');
    expect(() => loadConfig({ file, env: {} })).toThrow(new RegExp(`${path.basename(file)}`));
  });
});

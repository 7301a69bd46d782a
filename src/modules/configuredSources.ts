import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { scanFilesystem, scanGitRepository, type ScannedFile, type SkippedFile } from '../../infra/connectors/index.js';
import type { SourceHealth } from '../../queries/search/listSources.js';
import type { Config, SourceConfig } from '../config.js';

export interface ConfiguredSource {
  /** `kind:name`, as documents and `sources` name it. */
  name: string;
  config: SourceConfig;
  scan(): AsyncIterable<ScannedFile | SkippedFile>;
  health(): SourceHealth;
}

const isDirectory = (p: string) => existsSync(p) && statSync(p).isDirectory();

const healthOf = (name: string, config: SourceConfig): SourceHealth => {
  const missing =
    config.kind === 'filesystem'
      ? config.roots.filter((root) => !isDirectory(root))
      : isDirectory(path.join(config.repository, '.git')) || existsSync(path.join(config.repository, 'HEAD'))
        ? []
        : [config.repository];
  return missing.length === 0
    ? { name, healthy: true, notes: null }
    : { name, healthy: false, notes: `not found or not readable: ${missing.join(', ')}` };
};

/** The configured sources of a project: each belongs to one tenant (`tenant`, the operator's `default` unless set). */
export const sourcesOf = (sources: readonly ConfiguredSource[], project: string) =>
  sources.filter((source) => source.config.tenant === project);

export const configuredSources = (config: Config): ConfiguredSource[] =>
  Object.entries(config.sources).map(([key, source]) => {
    const name = `${source.kind}:${key}`;
    return {
      name,
      config: source,
      health: () => healthOf(name, source),
      scan: () =>
        source.kind === 'filesystem'
          ? scanFilesystem(source)
          : scanGitRepository({
              repository: source.repository,
              ref: source.ref,
              branch: source.branch,
              sourceUrlTemplate: source.urlTemplate,
              include: source.include,
              exclude: source.exclude,
              maxFileBytes: source.maxFileBytes,
            }),
    };
  });

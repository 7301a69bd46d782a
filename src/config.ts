import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { DEFAULT_VOCABULARY } from './domain/annotations.js';
import { CONFIG_FILE_NAME } from './domain/ledgerFiles.js';
import { AppError } from './errors.js';

const bind = z
  .string()
  .regex(/^[^:\s]+:\d{1,5}$/, { message: 'expected host:port, e.g. 127.0.0.1:7331', abort: true })
  .refine((v) => Number(v.split(':')[1]) <= 65535, 'port must be at most 65535');

/** Where `ctx model fetch` puts models, and where a local model is looked for unless `embeddings.model_dir` says otherwise. */
export const DEFAULT_MODEL_DIR = path.join(homedir(), '.cache', 'context-ledger', 'models');
export const DEFAULT_EMBEDDING_MODEL = 'Xenova/bge-small-en-v1.5';

const globs = z.array(z.string().min(1)).optional();

/** A list setting: an array in ctx.toml, comma-separated in the environment. */
const list = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v), z.array(item));

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;

/** Whether `host:port` listens on loopback only. */
export const isLoopbackBind = (bind: string): boolean => LOOPBACK_HOST.test(bind.slice(0, bind.lastIndexOf(':')));

/** A host name as a `Host` header carries it without its port; IPv6 addresses in brackets. */
const hostName = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .refine((v) => {
    try {
      return v !== '' && new URL(`http://${v}`).hostname === v;
    } catch {
      return false;
    }
  }, 'expected a host name without scheme or port, e.g. ctx.example.com or [fd00::1]');

/** `*`, or an origin as browsers send it: `scheme://host[:port]`. */
const corsOrigin = z
  .string()
  .transform((v) => v.trim().replace(/\/$/, ''))
  .refine((v) => {
    if (v === '*') return true;
    try {
      return new URL(v).origin === v.toLowerCase();
    } catch {
      return false;
    }
  }, 'expected "*" or an origin such as https://app.example.com (scheme, host and port only)')
  .transform((v) => v.toLowerCase());

/** `host`, `host:port` or `*.domain`, as a URL's host shows it (lowercase, IPv6 in brackets). */
const connectorHost = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .refine((v) => {
    const host = v.replace(/^\*\./, 'any.');
    try {
      const url = new URL(`http://${host}`);
      return url.pathname === '/' && !url.username && !url.password && (url.host === host || `${url.hostname}:80` === host);
    } catch {
      return false;
    }
  }, 'expected a host, host:port or *.domain without scheme or path, e.g. github.example.com, minio.internal:9000 or [fd00::1]');

/** A boolean, also as the environment spells one. */
const flag = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

/** The tenant (project) a configured source belongs to: only its callers see and ingest it. */
const sourceTenant = z.string().min(1).max(200).default('default');

const SourceSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('filesystem'),
      roots: z.array(z.string().min(1)).min(1),
      include: globs,
      exclude: globs,
      maxFileBytes: z.coerce.number().int().positive().optional(),
      respectGitignore: z.boolean().default(true),
      tenant: sourceTenant,
    })
    .strict(),
  z
    .object({
      kind: z.literal('git'),
      repository: z.string().min(1),
      ref: z.string().min(1).default('HEAD'),
      branch: z.string().min(1).optional(),
      /** e.g. `https://git.example.com/org/repo/blob/{commit}/{path}` */
      urlTemplate: z.string().min(1).optional(),
      include: globs,
      exclude: globs,
      maxFileBytes: z.coerce.number().int().positive().optional(),
      tenant: sourceTenant,
    })
    .strict(),
]);
export type SourceConfig = z.infer<typeof SourceSchema>;

export const ConfigSchema = z
  .object({
    server: z
      .object({
        bind: bind.default('127.0.0.1:7331'),
        bodyLimitBytes: z.coerce.number().int().positive().default(4 * 1024 * 1024),
        /** Host names clients may reach the server by, besides localhost, 127.0.0.1 and [::1]. */
        allowedHosts: list(hostName).default([]),
        /** Origins whose pages may call the server, besides localhost ones; `*` allows any. */
        corsOrigins: list(corsOrigin).default([]),
        /** Requests per minute per tenant to `/tools/*` and `/agents/*` (a tool that runs an operation counts in its class instead). */
        toolsPerMinute: z.coerce.number().int().positive().default(600),
        /** Requests per minute per tenant to MCP over HTTP. */
        mcpPerMinute: z.coerce.number().int().positive().default(1200),
        /** The class budgets per tenant and minute until `PATCH /config` changes them (its `rate_limits`). */
        searchPerMinute: z.coerce.number().int().min(1).max(100_000).default(100),
        indexPerMinute: z.coerce.number().int().min(1).max(100_000).default(10),
        connectorsPerMinute: z.coerce.number().int().min(1).max(100_000).default(20),
        configPerMinute: z.coerce.number().int().min(1).max(100_000).default(5),
        writePerMinute: z.coerce.number().int().min(1).max(100_000).default(600),
      })
      .strict()
      .prefault({})
      .refine((s) => isLoopbackBind(s.bind) || s.allowedHosts.length > 0, {
        message:
          'binding beyond loopback needs allowed_hosts: the host names clients use to reach this server (requests with any other Host header are refused)',
        path: ['allowedHosts'],
      }),
    storage: z
      .object({
        /** Embedded PGlite data directory; ignored when `postgresUrl` is set. */
        dataDir: z.string().min(1).default('./.ctx'),
        /** A PostgreSQL server instead of the embedded database. */
        postgresUrl: z.string().url().optional(),
        /** Where events live: the Postgres database above, or an EventStoreDB (KurrentDB) server. */
        eventStore: z.enum(['postgres', 'eventstoredb']).default('postgres'),
        /** e.g. `kurrentdb://host:2113?tls=true&tlsCAFile=/certs/ca.crt` (or `esdb://…`); TLS options go in the string. */
        eventstoreUrl: z.string().min(1).optional(),
      })
      .strict()
      .prefault({})
      .refine((s) => s.eventStore !== 'eventstoredb' || s.eventstoreUrl !== undefined, {
        message: 'event_store "eventstoredb" needs an eventstore_url',
        path: ['eventstoreUrl'],
      }),
    projections: z
      .object({
        batchSize: z.coerce.number().int().min(1).max(10_000).default(500),
      })
      .strict()
      .prefault({}),
    embeddings: z
      .object({
        /** `local`: a model run in-process; `http`: Ollama or an OpenAI-compatible server; `none`: keyword only. */
        provider: z.enum(['local', 'http', 'none']).default('local'),
        model: z.string().min(1).default(DEFAULT_EMBEDDING_MODEL),
        /** Folder holding `<model>/` for a local model (`ctx model fetch` fills it); nothing is downloaded at run time. */
        modelDir: z.string().min(1).default(DEFAULT_MODEL_DIR),
        url: z.string().url().optional(),
        api: z.enum(['openai', 'ollama']).default('openai'),
        apiKey: z.string().optional(),
        dimensions: z.coerce.number().int().positive().optional(),
        batchSize: z.coerce.number().int().min(1).max(512).default(32),
        /** A local model's ONNX weights: `auto` runs the full ones when the folder has them, `q8` the int8 export (faster, slightly less exact). */
        weights: z.enum(['auto', 'fp32', 'q8']).default('auto'),
        /** Threads a local model uses per forward pass; ONNX Runtime's default (one per core) when absent. */
        threads: z.coerce.number().int().min(1).max(64).optional(),
      })
      .strict()
      .prefault({})
      .refine((e) => e.provider !== 'http' || e.url !== undefined, {
        message: 'provider "http" needs a url',
        path: ['url'],
      }),
    /** Background indexing jobs. */
    jobs: z
      .object({
        maxConcurrent: z.coerce.number().int().min(1).max(64).default(3),
        progressIntervalMs: z.coerce.number().int().positive().default(2000),
        progressEveryFiles: z.coerce.number().int().positive().default(500),
      })
      .strict()
      .prefault({}),
    search: z
      .object({
        defaultLimit: z.coerce.number().int().min(1).max(100).default(12),
        /** BM25 in Postgres (`pg_textsearch`, embedded default) or a Meilisearch server. */
        keywordIndex: z.enum(['pg_textsearch', 'meilisearch']).default('pg_textsearch'),
        meilisearchUrl: z.string().url().optional(),
        meilisearchApiKey: z.string().optional(),
        /** A Meilisearch request unanswered this long counts as an outage. */
        meilisearchTimeoutMs: z.coerce.number().int().positive().default(30_000),
        /** Past positions whose search indexes (`search --as-of`) are kept built; older ones are dropped. */
        asOfCache: z.coerce.number().int().min(0).max(64).default(3),
      })
      .strict()
      .prefault({})
      .refine((s) => s.keywordIndex !== 'meilisearch' || s.meilisearchUrl !== undefined, {
        message: 'keyword_index "meilisearch" needs a meilisearch_url',
        path: ['meilisearchUrl'],
      }),
    /** A cross-encoder that reorders the first fused results of a search; off with provider "none". */
    reranker: z
      .object({
        /**
         * `local`: a cross-encoder run in-process from `model_dir`; `tei`: Text Embeddings Inference;
         * `cohere` / `jina`: their `/v1/rerank` API; `none`: fused order.
         */
        provider: z.enum(['none', 'local', 'tei', 'cohere', 'jina']).default('none'),
        url: z.string().url().optional(),
        model: z.string().min(1).optional(),
        /** Folder holding `<model>/` for a local cross-encoder (`ctx model fetch --reranker` fills it); default `<embeddings.model_dir>/reranker`. */
        modelDir: z.string().min(1).optional(),
        /** Sent as a bearer token; set it through CTX_RERANKER__API_KEY rather than the file. */
        apiKey: z.string().optional(),
        /** How many of the first fused results the reranker reorders. */
        topK: z.coerce.number().int().min(1).max(200).default(50),
        /** A reranking server unanswered this long is skipped: search answers in fused order and says so. A local model is waited for. */
        timeoutMs: z.coerce.number().int().positive().default(5_000),
      })
      .strict()
      .prefault({})
      .refine((r) => r.provider === 'none' || r.provider === 'local' || r.url !== undefined, {
        message: 'a reranker provider needs a url',
        path: ['url'],
      })
      .refine((r) => (r.provider !== 'cohere' && r.provider !== 'jina') || r.model !== undefined, {
        message: 'reranker provider "cohere" or "jina" needs a model',
        path: ['model'],
      }),
    /** Named sources, e.g. `[sources.platform] kind = "git"`, reported as `git:platform`. */
    sources: z
      .record(z.string().regex(/^[a-z0-9-]+$/, 'source names use lowercase letters, digits and hyphens'), SourceSchema)
      .default({}),
    /** The vocabulary annotators may use; the annotation tools' when not set. */
    annotations: z
      .object({
        categories: z.array(z.string().min(1)).min(1).default([...DEFAULT_VOCABULARY.categories]),
        labels: z.array(z.string().min(1)).min(1).default([...DEFAULT_VOCABULARY.labels]),
        subtypes: z.array(z.string().min(1)).min(1).default([...DEFAULT_VOCABULARY.subtypes]),
      })
      .strict()
      .prefault({}),
    extensions: z
      .object({
        /** Lua tools (`*.lua`); a missing folder means none. */
        toolsDir: z.string().min(1).default('./tools'),
        /** Agents (`*.toml` or `*.lua`). */
        agentsDir: z.string().min(1).default('./agents'),
        /** Lua connectors (`*.lua`), synced with `ctx sync <name>`. */
        connectorsDir: z.string().min(1).default('./connectors'),
        timeoutMs: z.coerce.number().int().positive().default(5000),
        memoryMb: z.coerce.number().positive().max(1024).default(64),
        /** Scripts running at once (each in a worker thread); as many more calls wait for a slot. */
        maxConcurrent: z.coerce.number().int().positive().max(64).default(4),
        instructionBudget: z.coerce.number().int().positive().default(1_000_000_000),
        /** Hosts (`host` or `host:port`) scripts may GET through `ctx.http.get`; empty disables it. */
        httpAllowlist: list(z.string().min(1)).default([]),
      })
      .strict()
      .prefault({}),
    /** Where remote connectors (github, jira, slack, s3) may send requests, besides their services' public hosts. */
    connectors: z
      .object({
        /** `host`, `host:port` or `*.domain`: GitHub Enterprise, a self-hosted Jira, an S3-compatible store. */
        allowedHosts: list(connectorHost).default([]),
        /** Whether connectors may reach loopback, private and link-local addresses (by name or number). */
        allowPrivateAddresses: flag.default(false),
      })
      .strict()
      .prefault({}),
    /** Who may call `/api/v1` and MCP over HTTP. */
    auth: z
      .object({
        /** `auto`: on unless the server binds to loopback only. */
        mode: z.enum(['auto', 'on', 'off']).default('auto'),
        /** HS256 secret; or `jwtPublicKey` (PEM) with `algorithm` RS256/ES256 for tokens signed elsewhere. */
        jwtSecret: z.string().min(32, 'jwt_secret must be at least 32 characters').optional(),
        jwtPublicKey: z.string().min(1).optional(),
        algorithm: z.enum(['HS256', 'RS256', 'ES256']).default('HS256'),
        issuer: z.string().min(1).default('context-engine'),
        audience: z.string().min(1).default('api'),
        accessTtlS: z.coerce.number().int().positive().default(900),
        refreshTtlS: z.coerce.number().int().positive().default(30 * 24 * 3600),
        /** Seals connector secrets in events (AES-256-GCM); derived from `jwtSecret` when unset. */
        secretsKey: z.string().min(32).optional(),
      })
      .strict()
      .prefault({})
      .refine((a) => a.algorithm === 'HS256' || a.jwtPublicKey !== undefined, {
        message: 'RS256 and ES256 need jwt_public_key',
        path: ['jwtPublicKey'],
      }),
    /** What ingestion may read from the server's disk. */
    ingest: z
      .object({
        /**
         * The folders that paths given to `ingest`, indexed repositories and local connectors' roots
         * must lie in; the working directory when unset. `[sources.*]` are read wherever they point.
         */
        roots: z
          .preprocess(
            (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
            z.array(z.string().min(1)).min(1),
          )
          .optional(),
      })
      .strict()
      .prefault({}),
    api: z
      .object({
        /** The older name of a one-folder `ingest.roots`. */
        connectorsRoot: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    /** What MCP exposes: tool groups, and whether tools that write are hidden. */
    mcp: z
      .object({
        toolsets: list(z.enum(['default', 'all', 'ledger', 'search', 'jobs', 'annotations', 'admin', 'extensions'])).optional(),
        readOnly: flag.default(false),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .refine((c) => c.ingest.roots === undefined || c.api.connectorsRoot === undefined, {
    message: 'api.connectors_root is the older name of ingest.roots: set only ingest.roots',
    path: ['api', 'connectorsRoot'],
  });

export type Config = Readonly<z.infer<typeof ConfigSchema>>;

export class ConfigError extends AppError {
  override name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super('CONFIG_ERROR', `Invalid configuration:\n  ${problems.join('\n  ')}`, { problems });
  }
}

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const camelKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), camelKeys(v)]));
  }
  return value;
};

/** A setting as written in `ctx.toml`: `server.body_limit_bytes`, `annotations.labels[2]`. */
const tomlKey = (path: readonly PropertyKey[]): string =>
  path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i > 0 ? '.' : ''}${snake(String(part))}`))
    .join('');

type Layer = Record<string, Record<string, unknown>>;
/** Where each `section.key` (camelCase) was set: the file, an environment variable or a flag. */
type Origins = Map<string, string>;

/** `CTX_SERVER__BIND=0.0.0.0:7331` sets `[server] bind`: a double underscore separates sections. */
const environmentOverrides = (env: NodeJS.ProcessEnv, origins: Origins): Layer => {
  const overrides: Layer = {};
  for (const [name, value] of Object.entries(env)) {
    const match = /^CTX_([A-Z0-9]+)__([A-Z0-9_]+)$/.exec(name);
    if (!match || value === undefined) continue;
    const section = camel(match[1]!.toLowerCase());
    const key = camel(match[2]!.toLowerCase());
    (overrides[section] ??= {})[key] = value;
    origins.set(`${section}.${key}`, `from ${name}`);
  }
  return overrides;
};

/** The `ctx.toml` of the working directory, if there is one. */
export const discoverConfigFile = (cwd: string = process.cwd()): string | undefined => {
  const file = path.join(cwd, CONFIG_FILE_NAME);
  return existsSync(file) ? file : undefined;
};

export interface LoadConfigOptions {
  /** A `ctx.toml` file; without one, defaults (and the environment) give the embedded mode. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Command-line settings, applied last. */
  overrides?: Partial<Record<string, Record<string, string | undefined>>>;
  /** The flag behind each override, by `section.key` (camelCase), e.g. `{'server.bind': '--bind'}`, for error messages. */
  flags?: Record<string, string>;
}

/** Reads, merges and validates the configuration; throws one ConfigError listing every problem. */
export const loadConfig = ({ file, env = process.env, overrides = {}, flags = {} }: LoadConfigOptions = {}): Config => {
  const origins: Origins = new Map();
  let fromFile: Record<string, unknown> = {};
  if (file) {
    try {
      fromFile = camelKeys(parseToml(readFileSync(file, 'utf8'))) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError([`${path.resolve(file)}: ${(error as Error).message}`]);
    }
    for (const [section, values] of Object.entries(fromFile)) {
      for (const key of values && typeof values === 'object' ? Object.keys(values) : [''])
        origins.set(key ? `${section}.${key}` : section, `in ${file}`);
    }
  }
  const fromFlags: Layer = {};
  for (const [section, values] of Object.entries(overrides)) {
    for (const [key, value] of Object.entries(values ?? {})) {
      if (value === undefined) continue;
      (fromFlags[section] ??= {})[key] = value;
      origins.set(`${section}.${key}`, `from ${flags[`${section}.${key}`] ?? 'the command line'}`);
    }
  }
  const merged: Record<string, unknown> = { ...fromFile };
  for (const layer of [environmentOverrides(env, origins), fromFlags]) {
    for (const [section, values] of Object.entries(layer)) {
      merged[section] = { ...(merged[section] as Record<string, unknown> | undefined), ...values };
    }
  }
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success)
    throw new ConfigError(parsed.error.issues.flatMap((issue) => describeSetting(issue, origins, merged)));
  return Object.freeze(parsed.data);
};

/** The object schema under wrappers such as `.prefault({})` and `.optional()`, if there is one. */
const objectSchema = (schema: z.core.$ZodType | undefined): z.ZodObject | undefined => {
  let current = schema;
  while (current && !(current instanceof z.ZodObject)) {
    const inner = (current._zod.def as { innerType?: z.core.$ZodType }).innerType;
    if (!inner) return undefined;
    current = inner;
  }
  return current;
};

/** The settings (camelCase) an object in the configuration may hold, at a path from the root. */
const knownSettings = (at: readonly PropertyKey[]): string[] => {
  let schema: z.ZodObject | undefined = ConfigSchema;
  for (const part of at) schema = objectSchema(schema?.shape[String(part)] as z.core.$ZodType | undefined);
  return schema ? Object.keys(schema.shape) : [];
};

const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
};

/** The known setting a misspelt one most likely meant: within two edits, or a third of its length. */
const closestSetting = (key: string, known: string[]): string | undefined => {
  const ranked = known
    .map((name) => ({ name, distance: editDistance(snake(key), snake(name)) }))
    .sort((a, b) => a.distance - b.distance);
  const best = ranked[0];
  return best && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.name : undefined;
};

const valueAt = (root: unknown, at: readonly PropertyKey[]): unknown =>
  at.reduce<unknown>((value, part) => (value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[part] : undefined), root);

const describeSetting = (issue: z.core.$ZodIssue, origins: Origins, given: unknown): string[] => {
  const origin = (path: readonly PropertyKey[]) => {
    const section = String(path[0]);
    const found =
      origins.get(`${section}.${String(path[1])}`) ??
      origins.get(section) ??
      // An unknown section: whatever set one of its keys.
      (path.length === 1 ? [...origins].find(([key]) => key.startsWith(`${section}.`))?.[1] : undefined);
    return found ? ` (${found})` : '';
  };
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const at = [...issue.path, key];
      const meant = closestSetting(key, knownSettings(issue.path));
      const suggestion = meant ? ` (did you mean ${issue.path.length ? tomlKey([...issue.path, meant]) : `[${snake(meant)}]`}?)` : '';
      return `${tomlKey(at)}: not a setting${issue.path.length ? ` of [${tomlKey(issue.path)}]` : ''}${suggestion}${origin(at)}`;
    });
  }
  // `z.coerce.number()` reports text such as "abc" as NaN: say what was given instead.
  const message =
    issue.code === 'invalid_type' && issue.expected === 'number'
      ? `expected a number, got ${JSON.stringify(valueAt(given, issue.path))}`
      : issue.message;
  return [`${issue.path.length ? tomlKey(issue.path) : '(root)'}: ${message}${origin(issue.path)}`];
};

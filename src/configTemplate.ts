import { ConfigSchema } from './config.js';

const toml = (value: unknown): string =>
  Array.isArray(value) ? `[${value.map(toml).join(', ')}]` : JSON.stringify(value);

/** Lines up trailing comments (two or more spaces, then `#`) in one column. */
const alignComments = (text: string, column = 42): string =>
  text.replace(
    /^(.*?\S) {2,}(# .*)$/gm,
    (_, setting: string, comment: string) => `${setting.padEnd(column - 1)} ${comment}`,
  );

/**
 * A vocabulary for a new project's annotations: whether a chunk matters to the question at hand.
 * Unset, annotation tools take the fee-schedule vocabulary their specification names.
 */
export const STARTER_VOCABULARY = {
  categories: ['relevant', 'irrelevant', 'needs_review'],
  labels: ['Relevant', 'Irrelevant', 'Needs Review'],
  subtypes: ['definition', 'example', 'reference', 'question', 'other'],
} as const;

/**
 * The `ctx.toml` that `ctx init` writes: every setting with a comment, at its default (optional
 * ones commented out), but for a generic annotation vocabulary to start from.
 */
export const configTemplate = (): string => {
  const d = ConfigSchema.parse({});
  return alignComments(`# Context Ledger configuration. Every value below is the default, but for [annotations];
# delete what you do not change.
# Environment variables override this file: CTX_<SECTION>__<KEY>, e.g. CTX_SERVER__BIND=0.0.0.0:7331.
# \`ctx\` reads ./ctx.toml from the working directory; \`--config FILE\` reads another file instead.

[server]
bind = ${toml(d.server.bind)}                # host:port; beyond loopback, authentication turns on
body_limit_bytes = ${d.server.bodyLimitBytes}          # largest request body
allowed_hosts = ${toml(d.server.allowedHosts)}                         # host names clients use, besides localhost (needed beyond loopback)
cors_origins = ${toml(d.server.corsOrigins)}                          # origins whose pages may call, besides localhost ones; "*" for any
tools_per_minute = ${d.server.toolsPerMinute}                   # requests per minute per tenant to Lua tools, /tools/list and /agents/*
mcp_per_minute = ${d.server.mcpPerMinute}                    # MCP messages over HTTP per minute per tenant
# Budgets per tenant and minute that every surface shares (REST, /tools, MCP), to start with;
# the operator changes them at run time with PATCH /api/v1/config {"rate_limits": …}.
search_per_minute = ${d.server.searchPerMinute}                  # searches
index_per_minute = ${d.server.indexPerMinute}                    # index start, stop and status
connectors_per_minute = ${d.server.connectorsPerMinute}              # connector reads and changes
config_per_minute = ${d.server.configPerMinute}                    # configuration reads and changes
write_per_minute = ${d.server.writePerMinute}                   # other writes: ingest batches, annotations

[storage]
data_dir = ${toml(d.storage.dataDir)}                     # the embedded database; one process at a time
# postgres_url = "postgres://user@host/db"  # a PostgreSQL server instead (needs pgvector)
event_store = ${toml(d.storage.eventStore)}               # postgres | eventstoredb
# eventstore_url = "kurrentdb://host:2113?tls=false"

[embeddings]
provider = ${toml(d.embeddings.provider)}                    # local | http | none (keyword search only)
model = ${toml(d.embeddings.model)}
# model_dir = "/opt/models"                 # holds <model>/; nothing is downloaded then
# url = "http://127.0.0.1:11434"            # provider = "http": an Ollama or OpenAI-compatible server
api = ${toml(d.embeddings.api)}                        # openai | ollama
# api_key = "sk-…"                          # provider = "http": sent as a bearer token
# dimensions = 384                          # provider = "http": the vectors' length (unset: learnt from one request)
batch_size = ${d.embeddings.batchSize}
weights = ${toml(d.embeddings.weights)}                     # auto | fp32 | q8 (int8: faster, slightly less exact)
# threads = 2                               # a local model's threads per forward pass

[jobs]
max_concurrent = ${d.jobs.maxConcurrent}                        # more wait as pending
progress_interval_ms = ${d.jobs.progressIntervalMs}
progress_every_files = ${d.jobs.progressEveryFiles}

[search]
default_limit = ${d.search.defaultLimit}
keyword_index = ${toml(d.search.keywordIndex)}           # pg_textsearch | meilisearch
# meilisearch_url = "http://127.0.0.1:7700"
# meilisearch_api_key = "…"
meilisearch_timeout_ms = ${d.search.meilisearchTimeoutMs}              # a Meilisearch request unanswered this long counts as an outage
as_of_cache = ${d.search.asOfCache}                           # past positions whose search indexes stay built

[reranker]
provider = ${toml(d.reranker.provider)}                         # none | local | tei | cohere | jina: a cross-encoder reorders the first results
# url = "http://127.0.0.1:8080"             # TEI's base URL, or https://api.cohere.com / https://api.jina.ai
# model = "rerank-v3.5"                     # cohere | jina: the model named in each request; local: its folder (default Xenova/ms-marco-MiniLM-L-6-v2)
# model_dir = "/opt/models/reranker"       # local: holds <model>/ (default: <embeddings.model_dir>/reranker); \`ctx model fetch --reranker NAME\` fills it
# api_key = "…"                            # sent as a bearer token; better set CTX_RERANKER__API_KEY
top_k = ${d.reranker.topK}                                # how many of the first fused results are reordered
timeout_ms = ${d.reranker.timeoutMs}                         # unanswered this long: fused order, with a notice

# Named sources, ingested with \`ctx ingest --source git:platform\`:
# [sources.platform]
# kind = "git"
# repository = "../platform"
# [sources.handbook]
# kind = "filesystem"
# roots = ["./handbook"]

[annotations]                             # the vocabulary annotators may use; unset, a fee schedule's
categories = ${toml(STARTER_VOCABULARY.categories)}
labels = ${toml(STARTER_VOCABULARY.labels)}
subtypes = ${toml(STARTER_VOCABULARY.subtypes)}

[extensions]
tools_dir = ${toml(d.extensions.toolsDir)}                   # Lua tools (*.lua)
agents_dir = ${toml(d.extensions.agentsDir)}                 # agents (*.toml, *.lua)
connectors_dir = ${toml(d.extensions.connectorsDir)}         # Lua connectors, synced with \`ctx sync <name>\`
timeout_ms = ${d.extensions.timeoutMs}
memory_mb = ${d.extensions.memoryMb}
max_concurrent = ${d.extensions.maxConcurrent}                    # scripts running at once; as many more wait
instruction_budget = ${d.extensions.instructionBudget}
http_allowlist = ${toml(d.extensions.httpAllowlist)}                       # hosts scripts may GET

[connectors]                              # where github, jira, slack and s3 connectors may send requests
allowed_hosts = ${toml(d.connectors.allowedHosts)}                        # besides api.github.com, *.atlassian.net, slack.com, AWS S3; e.g.
                                          # ["github.example.com", "jira.internal:8443", "*.minio.example"]
allow_private_addresses = ${toml(d.connectors.allowPrivateAddresses)}            # let them reach loopback, private and link-local addresses

[auth]
mode = ${toml(d.auth.mode)}                             # auto (on unless bound to loopback) | on | off
# jwt_secret = "at least 32 characters"
# jwt_public_key = "-----BEGIN PUBLIC KEY-----…"  # RS256 or ES256: tokens signed elsewhere
algorithm = ${toml(d.auth.algorithm)}
issuer = ${toml(d.auth.issuer)}
audience = ${toml(d.auth.audience)}
access_ttl_s = ${d.auth.accessTtlS}
refresh_ttl_s = ${d.auth.refreshTtlS}
# secrets_key = "at least 32 characters"   # seals connector secrets and annotation notes

[ingest]
# Folders ctx ingest, indexed repositories and local connectors may read (default: the working directory,
# unless that is / or the home folder or above it: then none).
# Setting them replaces the default: list the working directory too if it should stay readable.
# Or in the environment: CTX_INGEST__ROOTS=.,/srv/repos
# roots = [".", "/srv/repos"]

[mcp]
# toolsets = ["default"]                    # or "all", or groups: ledger, search, jobs, annotations, admin, extensions
read_only = ${toml(d.mcp.readOnly)}                        # hide every tool that writes

[projections]
batch_size = ${d.projections.batchSize}

[log]
level = ${toml(d.log.level)}                            # fatal | error | warn | info | debug | trace | silent
`);
};

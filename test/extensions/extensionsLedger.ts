import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { loadConfig } from '../../src/config.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { createExtensionsModule } from '../../src/modules/extensionsModule.js';
import { MODULES } from '../../src/modules/index.js';
import { defineOperation } from '../../src/operations.js';
import type { ContextTools } from '../../src/ports/contextTools.js';
import type { DocumentSink, IncomingDocument } from '../../src/ports/documentSink.js';
import { tempDataDir } from '../support/ledger.js';

export const EXAMPLES = path.resolve(import.meta.dirname, '../../examples');

/** A tools folder holding the example tools plus the given scripts. */
export const toolsFolder = (scripts: Record<string, string> = {}): string => {
  const dir = path.join(tempDataDir('ctx-tools-'), 'tools');
  mkdirSync(dir);
  for (const file of readdirSync(path.join(EXAMPLES, 'tools'))) copyFileSync(path.join(EXAMPLES, 'tools', file), path.join(dir, file));
  for (const [file, source] of Object.entries(scripts)) writeScript(dir, file, source);
  return dir;
};

export const writeScript = (dir: string, file: string, source: string) => writeFileSync(path.join(dir, file), source);

/** Context queries over a fixed list of documents: a port double with real keyword matching. */
export const fixedContext = (documents: { id: string; title: string; source: string; body: string }[]): ContextTools => ({
  search: (query, options) => {
    const words = query.toLowerCase().split(/\s+/);
    const results = documents
      .filter((d) => !options.source || d.source === options.source)
      .filter((d) => words.some((w) => `${d.title} ${d.body}`.toLowerCase().includes(w)))
      .slice(0, options.limit ?? 10)
      .map((d) => ({ id: d.id, title: d.title, source: d.source, source_id: d.id, score: 1, snippet: d.body }));
    return Promise.resolve({ results });
  },
  get: (id) => Promise.resolve(documents.find((d) => d.id === id) ?? null),
  sources: () => Promise.resolve({ sources: [...new Set(documents.map((d) => d.source))].map((name) => ({ name, configured: true, healthy: true })) }),
});

/** A document sink that keeps what it is given and answers like ingestion does. */
export const recordingSink = () => {
  const documents = new Map<string, IncomingDocument>();
  const sink: DocumentSink = {
    ingest: (document) => {
      const key = `${document.source}/${document.sourceId}`;
      const before = documents.get(key);
      documents.set(key, document);
      return Promise.resolve(!before ? 'created' : before.body === document.body ? 'unchanged' : 'updated');
    },
  };
  return { sink, documents };
};

/** A built-in tool of the search toolset, so that dispatch and name clashes can be seen. */
export const echoBuiltin = defineOperation({
  name: 'echo',
  title: 'Echo',
  description: 'Answers with its input',
  toolset: 'search',
  writes: false,
  input: z.object({ say: z.string().describe('What to echo') }),
  output: z.object({ said: z.string() }),
  run: ({ say }) => Promise.resolve({ said: say }),
});

export interface ExtensionsLedgerOptions {
  toolsDir: string;
  agentsDir?: string;
  connectorsDir?: string;
  timeoutMs?: number;
  memoryMb?: number;
  maxConcurrent?: number;
  contextTools?: ContextTools;
  documentSink?: DocumentSink;
}

export const openExtensionsLedger = async (options: ExtensionsLedgerOptions): Promise<Ledger> => {
  const opened: { ledger?: Ledger } = {};
  const extensions = createExtensionsModule({
    operations: () => [...(opened.ledger?.operations() ?? []), echoBuiltin],
    contextTools: options.contextTools,
    documentSink: options.documentSink,
  });
  const env = {
    CTX_EXTENSIONS__TOOLS_DIR: options.toolsDir,
    CTX_EXTENSIONS__AGENTS_DIR: options.agentsDir ?? path.join(EXAMPLES, 'agents'),
    CTX_EXTENSIONS__CONNECTORS_DIR: options.connectorsDir ?? path.join(EXAMPLES, 'connectors'),
    CTX_EXTENSIONS__TIMEOUT_MS: String(options.timeoutMs ?? 1500),
    CTX_EXTENSIONS__MEMORY_MB: String(options.memoryMb ?? 16),
    ...(options.maxConcurrent ? { CTX_EXTENSIONS__MAX_CONCURRENT: String(options.maxConcurrent) } : {}),
  };
  opened.ledger = await openLedger(
    loadConfig({ env, overrides: { storage: { dataDir: tempDataDir() }, server: { bind: '127.0.0.1:0' } } }),
    { logger: pino({ level: 'silent' }), modules: [...MODULES.filter((m) => m.name !== 'extensions'), extensions] },
  );
  return opened.ledger;
};

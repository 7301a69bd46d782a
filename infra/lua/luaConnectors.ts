import { z } from 'zod';
import { Instant } from '../../src/domain/instant.js';
import { toStorableText } from '../../src/domain/text.js';
import type { DocumentSink } from '../../src/ports/documentSink.js';
import { ScriptLoadError, ToolError } from './luaErrors.js';
import { describeDeclarationProblems, TOOL_NAME_PATTERN } from './luaTools.js';
import type { LuaRunner } from './luaPool.js';
import type { LuaDeclaration, LuaHost } from './luaRuntime.js';
import type { ScriptFile } from './scriptFiles.js';

export interface LuaConnector {
  name: string;
  description: string;
  script: ScriptFile;
}

const ConnectorDeclarationSchema = z
  .object({
    name: z.string().regex(TOOL_NAME_PATTERN, 'must start with a letter and hold only letters, digits, _ and .'),
    description: z.string().default(''),
  })
  .strict();

const DocumentSchema = z
  .object({
    source_id: z.union([z.string().min(1), z.number()]).transform(String),
    title: z.string().nullish(),
    body: z.string(),
    updated_at: Instant.nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
  })
  .strict();

const emptyTableAsList = (v: unknown) =>
  v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0 ? [] : v;

/** `fetch` returns a list of documents, or `{ documents, cursor, has_more }` to page. */
const PageSchema = z.union([
  z.preprocess(emptyTableAsList, z.array(DocumentSchema)).transform((documents) => ({ documents, cursor: null, hasMore: false })),
  z
    .object({
      documents: z.preprocess(emptyTableAsList, z.array(DocumentSchema)).default([]),
      cursor: z.union([z.string(), z.number()]).transform(String).nullish(),
      has_more: z.boolean().default(false),
    })
    .strict()
    .transform((page) => ({ documents: page.documents, cursor: page.cursor ?? null, hasMore: page.has_more })),
]);

export const loadLuaConnector = async (script: ScriptFile, host: LuaHost, lua: LuaRunner): Promise<LuaConnector> => {
  let declaration: LuaDeclaration;
  try {
    declaration = (await lua.run({ source: script.source, chunkName: script.shownAs, kind: 'connector' }, host)) as LuaDeclaration;
  } catch (error) {
    throw new ScriptLoadError(script.shownAs, (error as Error).message);
  }
  if (!declaration.functions.includes('fetch')) throw new ScriptLoadError(script.shownAs, 'connector.fetch must be a function');
  const declared = ConnectorDeclarationSchema.safeParse(declaration.fields);
  if (!declared.success) throw new ScriptLoadError(script.shownAs, `invalid connector: ${describeDeclarationProblems(declared.error)}`);
  return { ...declared.data, script };
};

export interface SyncPage {
  cursor: string | null;
  documents: number;
  created: number;
  updated: number;
  unchanged: number;
}

export interface SyncOptions {
  connector: LuaConnector;
  sink: DocumentSink;
  host: LuaHost;
  lua: LuaRunner;
  /** Where the previous sync stopped. */
  cursor: string | null;
  /** Called after each page is ingested, so the next sync resumes after it. */
  onPage: (page: SyncPage) => Promise<void>;
  maxPages?: number;
}

export interface SyncSummary {
  pages: number;
  documents: number;
  created: number;
  updated: number;
  unchanged: number;
  cursor: string | null;
}

/** Calls `connector.fetch(cursor, ctx)` page after page and ingests what it returns. */
export const syncLuaConnector = async ({ connector, sink, host, lua, cursor, onPage, maxPages = 1000 }: SyncOptions): Promise<SyncSummary> => {
  const summary: SyncSummary = { pages: 0, documents: 0, created: 0, updated: 0, unchanged: 0, cursor };
  for (let page = 0; page < maxPages; page++) {
    const output = await lua.run(
      { source: connector.script.source, chunkName: connector.script.shownAs, kind: 'connector', entry: 'fetch', input: summary.cursor },
      host,
    );
    const parsed = PageSchema.safeParse(output ?? []);
    if (!parsed.success) {
      throw new ToolError(`${connector.script.shownAs}: connector.fetch returned ${describeDeclarationProblems(parsed.error)}`);
    }
    const counts = { created: 0, updated: 0, unchanged: 0 };
    // A script's text is repaired rather than refused: one stray character must not stop a sync.
    const { documents, cursor: returnedCursor, hasMore } = toStorableText(parsed.data);
    for (const document of documents) {
      const outcome = await sink.ingest({
        source: connector.name,
        sourceId: document.source_id,
        title: document.title ?? null,
        body: document.body,
        updatedAt: document.updated_at ?? null,
        metadata: document.metadata ?? {},
      });
      counts[outcome] += 1;
    }
    const nextCursor = returnedCursor ?? summary.cursor;
    const advanced = nextCursor !== summary.cursor;
    if (documents.length > 0 || advanced) {
      await onPage({ cursor: nextCursor, documents: documents.length, ...counts });
    }
    summary.pages += 1;
    summary.documents += documents.length;
    summary.created += counts.created;
    summary.updated += counts.updated;
    summary.unchanged += counts.unchanged;
    summary.cursor = nextCursor;
    if (!hasMore || !advanced) break;
  }
  return summary;
};

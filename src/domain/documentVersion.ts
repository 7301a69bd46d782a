import { z } from 'zod';
import { evolveDocument, initialDocumentState, type DocumentEvent, type DocumentState } from './documents.js';
import type { Fold, Folded } from './asOf.js';

/** A document's versions, folded from its stream. */
export const documentFold: Fold<DocumentState, DocumentEvent> = {
  initialState: initialDocumentState,
  evolve: evolveDocument,
};

export const DocumentVersionSchema = z.object({
  id: z.string(),
  version: z.number().int().describe('How many versions had been ingested by then'),
  revision: z.number().int().describe('Revision of the last event of the document stream by then'),
  removed: z.boolean().describe('It had no current version by then: it had been removed or forgotten'),
  forgotten: z.boolean().describe('Its content had been forgotten by then (and not ingested again since)'),
  content_hash: z.string().nullable().describe('sha256 of the body then; null once removed or forgotten'),
  source: z.string().nullable(),
  source_id: z.string().nullable(),
  title: z.string().nullable(),
  content_type: z.string().nullable(),
  updated_at: z.string().nullable(),
  chunk_ids: z.array(z.string()).describe('The ids of its chunks then, in order'),
});
export type DocumentVersion = z.infer<typeof DocumentVersionSchema>;

/** Which version a document was at, and which chunks it had; null when it did not exist yet. */
export const documentVersion = (
  { state, revision }: Folded<DocumentState>,
  id: string,
): DocumentVersion | null => {
  if (revision === null) return null;
  const current = state.current;
  return {
    id,
    version: state.versions,
    revision: Number(revision),
    removed: current === null,
    forgotten: state.forgotten,
    content_hash: current?.bodyHash ?? null,
    source: current?.source ?? null,
    source_id: current?.sourceId ?? null,
    title: current?.title ?? null,
    content_type: current?.contentType ?? null,
    updated_at: current?.updatedAt ?? null,
    chunk_ids: current?.chunks.map((c) => c.id) ?? [],
  };
};


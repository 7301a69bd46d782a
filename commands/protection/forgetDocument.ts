import {
  evolveDocument,
  initialDocumentState,
  type DocumentEvent,
  type DocumentIngested,
  type DocumentState,
} from '../../src/domain/documents.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import { handleCommand, type CommandContext, type Decider } from '../../src/engine/commands.js';
import { NotFoundError } from '../../src/errors.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { ContentErasure } from '../../src/ports/contentErasure.js';

export interface ForgetDocument {
  documentId: string;
  reason: string | null;
}

export const forgetDocumentDecider: Decider<DocumentState, ForgetDocument, DocumentEvent> = {
  initialState: initialDocumentState,
  evolve: evolveDocument,
  decide: (command, state) => {
    if (state.versions === 0) throw new NotFoundError(`No document '${command.documentId}'`);
    if (state.forgotten) return [];
    return [{ type: 'DocumentForgotten', schemaVersion: 1, data: { ...command, versions: state.versions } }];
  },
};

export interface ForgetDocumentDeps {
  store: EventStore;
  erasure: ContentErasure;
  waitForProjections: (position: Position) => Promise<void>;
}

export interface DocumentForgetting {
  documentId: string;
  /** False when it was already forgotten: the erasure ran again, harmlessly. */
  newlyForgotten: boolean;
  contentsErased: number;
  /** Texts another document still holds: they stay, for that document. */
  contentsKept: number;
  position: Position | null;
}

/**
 * Forgets the content of every version of a document: records who asked and why, lets the
 * projections drop its chunks from the search indexes, then erases its texts and their cached
 * embeddings. Running it again finishes an erasure that was cut short.
 */
export const forgetDocument = async (
  deps: ForgetDocumentDeps,
  command: ForgetDocument,
  context: CommandContext,
): Promise<DocumentForgetting> => {
  const stream = streamId('doc', command.documentId);
  const [first] = await deps.store.readStream(stream, { maxCount: 1 });
  // Another project's document is as unknown as a missing one.
  if (first?.metadata.project !== context.project)
    throw new NotFoundError(`No document '${command.documentId}'`);
  const result = await handleCommand(deps.store, stream, forgetDocumentDecider, command, context, {
    retries: 3,
  });
  // Until the documents read model has the document forgotten, it still counts as holding its own texts.
  await deps.waitForProjections(result.position ?? (await deps.store.headPosition()));
  const versions = (await deps.store.readStream(stream))
    .filter((e): e is StoredEvent<DocumentIngested> => e.type === 'DocumentIngested')
    .map((e) => e.data);
  const { erased, kept } = await deps.erasure.erase({
    hashes: versions.flatMap((v) => [v.bodyHash, ...v.chunks.map((c) => c.textHash)]),
    titles: versions.map((v) => v.title),
  });
  return {
    documentId: command.documentId,
    newlyForgotten: result.events.length > 0,
    contentsErased: erased,
    contentsKept: kept,
    position: result.position,
  };
};

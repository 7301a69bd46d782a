import { evolveDocument, initialDocumentState, type DocumentEvent, type DocumentState } from '../../src/domain/documents.js';
import { streamId } from '../../src/domain/events.js';
import { handleCommand, type CommandContext, type Decider } from '../../src/engine/commands.js';
import { NotFoundError } from '../../src/errors.js';
import type { EventStore } from '../../src/ports/eventStore.js';

type RemoveCommand = { documentId: string; reason: string | null };

export const removeDecider: Decider<DocumentState, RemoveCommand, DocumentEvent> = {
  initialState: initialDocumentState,
  evolve: evolveDocument,
  decide: (command, state) => {
    if (state.versions === 0) throw new NotFoundError(`No document '${command.documentId}'`);
    if (!state.current) return [];
    return [{ type: 'DocumentRemoved', schemaVersion: 1, data: command }];
  },
};

/** Removes a document from every index; removing it twice is harmless. */
export const removeDocument = async (
  store: EventStore,
  command: RemoveCommand,
  context: CommandContext,
): Promise<{ removed: boolean }> => {
  const result = await handleCommand(store, streamId('doc', command.documentId), removeDecider, command, context, {
    retries: 3,
  });
  return { removed: result.events.length > 0 };
};

import { streamId } from '../../src/domain/events.js';
import { scriptedSourceStreamKey, type ScriptedSourceSynced } from '../../src/domain/tools.js';
import { runCommand, unread, type CommandContext } from '../../src/engine/commands.js';
import type { EventStore } from '../../src/ports/eventStore.js';

/** Records a page a Lua connector synced: what it ingested and the cursor the next sync resumes from. */
export const recordScriptedSourceSync = async (
  store: EventStore,
  page: ScriptedSourceSynced['data'],
  context: CommandContext,
): Promise<void> => {
  await runCommand(
    store,
    streamId('tool', scriptedSourceStreamKey(page.connector)),
    unread(undefined),
    () => ({ events: [{ type: 'ScriptedSourceSynced', schemaVersion: 1, data: page }], result: undefined }),
    context,
    { expected: 'any' },
  );
};

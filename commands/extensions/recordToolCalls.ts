import { streamId } from '../../src/domain/events.js';
import { toolStreamKey, type ToolCalled } from '../../src/domain/tools.js';
import { runCommand, unread, type Recorded } from '../../src/engine/commands.js';
import type { EventStore } from '../../src/ports/eventStore.js';

/** Records tool calls in their tools' streams, one append per tool; one tool's failure does not stop the others. */
export const recordToolCalls = async (
  store: EventStore,
  calls: readonly Recorded<ToolCalled>[],
): Promise<void> => {
  const byTool = new Map<string, Recorded<ToolCalled>[]>();
  for (const record of calls)
    byTool.set(record.event.data.tool, [...(byTool.get(record.event.data.tool) ?? []), record]);
  for (const [tool, records] of byTool) {
    // Each call keeps the metadata of the call it records.
    await runCommand(
      store,
      streamId('tool', toolStreamKey(tool)),
      unread(undefined),
      () => ({ events: records.map((r) => r.event), contexts: records.map((r) => r.context), result: undefined }),
      records[0]!.context,
      { expected: 'any' },
    );
  }
};

import { streamId } from '../src/domain/events.js';
import { toolStreamKey, type ToolCalled } from '../src/domain/tools.js';
import { appendRecords, type Recorded } from '../src/engine/commands.js';
import type { EventStore } from '../src/ports/eventStore.js';

/** Records tool calls in their tools' streams, one append per tool; one tool's failure does not stop the others. */
export const recordToolCalls = async (
  store: EventStore,
  calls: readonly Recorded<ToolCalled>[],
): Promise<void> => {
  const byTool = new Map<string, Recorded<ToolCalled>[]>();
  for (const record of calls)
    byTool.set(record.event.data.tool, [...(byTool.get(record.event.data.tool) ?? []), record]);
  for (const [tool, records] of byTool)
    await appendRecords(store, streamId('tool', toolStreamKey(tool)), records);
};

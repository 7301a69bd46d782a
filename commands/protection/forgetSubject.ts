import { PROTECTED_FIELDS, type AnnotationEvent } from '../../src/domain/annotations.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import { runCommand, unread, type CommandContext } from '../../src/engine/commands.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { SubjectForgotten } from '../../src/domain/protection.js';
import type { Keyring } from '../../src/ports/keyring.js';

export interface ForgetSubject {
  subject: string;
  /** Null: in every tenant. */
  tenant: string | null;
  reason: string | null;
}

export interface SubjectForgetting {
  subject: string;
  tenant: string | null;
  keysForgotten: number;
  /** Notes and summaries of this subject written before free text was sealed: they stay readable. */
  plaintextNotes: number;
  position: Position;
}

/** The request, with what was found to forget. */
export interface SubjectToForget extends ForgetSubject {
  keyIds: string[];
  plaintextNotes: number;
}

/** A forget request is recorded in a stream of its own, as it was made. */
export const decideForgetSubject = (command: SubjectToForget): SubjectForgotten[] => [
  { type: 'SubjectForgotten', schemaVersion: 1, data: command },
];

const PAGE = 1_000;

/** Annotations by the subject (in the tenant) whose notes or summaries were written as plain text. */
const countPlaintextNotes = async (
  store: EventStore,
  { subject, tenant }: ForgetSubject,
): Promise<number> => {
  let count = 0;
  let from: Position | undefined;
  for (;;) {
    const page = await store.readAll({
      from,
      maxCount: PAGE,
      filter: { eventTypes: ['ChunkAnnotated'], actor: subject },
    });
    for (const event of page as StoredEvent<Extract<AnnotationEvent, { type: 'ChunkAnnotated' }>>[]) {
      if (tenant !== null && event.metadata.actor.tenant !== tenant) continue;
      for (const { changes } of event.data.annotations) {
        if (PROTECTED_FIELDS.some((field) => typeof changes[field] === 'string' && changes[field] !== ''))
          count += 1;
      }
    }
    if (page.length < PAGE) return count;
    from = page[page.length - 1]!.position;
  }
};

/**
 * Forgets a subject: records the request, then deletes the subject's data keys, after which every
 * note and summary they sealed reads as forgotten on every surface, rebuilt read models included.
 * The subject's later annotations get a new key.
 */
export const forgetSubject = async (
  deps: { store: EventStore; keyring: Keyring },
  command: ForgetSubject,
  context: CommandContext,
): Promise<SubjectForgetting> => {
  const keyIds = await deps.keyring.liveKeys(command.subject, command.tenant);
  const plaintextNotes = await countPlaintextNotes(deps.store, command);
  // A new stream per command: the same command again is answered from the first append.
  const { appended } = await runCommand(
    deps.store,
    streamId('forget', context.commandId),
    unread(undefined),
    () => ({ events: decideForgetSubject({ ...command, keyIds, plaintextNotes }), result: undefined }),
    context,
  );
  const { position } = appended!;
  const keysForgotten = await deps.keyring.forget(keyIds);
  return { subject: command.subject, tenant: command.tenant, keysForgotten, plaintextNotes, position };
};

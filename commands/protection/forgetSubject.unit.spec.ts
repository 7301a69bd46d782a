import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../src/domain/events.js';
import type { SubjectForgotten } from '../../src/domain/protection.js';
import type { Decider } from '../../src/engine/commands.js';
import { checkDecider, unitContext, type DeciderCase } from '../../test/support/givenWhenThen.js';
import { decideForgetSubject, type SubjectToForget } from './forgetSubject.js';

/** A forget request's stream is its own and new: nothing to fold. */
const forgetDecider: Decider<null, SubjectToForget, SubjectForgotten> = {
  initialState: () => null,
  evolve: (state) => state,
  decide: (command) => decideForgetSubject(command),
};

const keyId = '00000000-0000-4000-8000-0000000000f1';
const request: SubjectToForget = { subject: 'bob', tenant: 'acme', reason: 'asked', keyIds: [keyId], plaintextNotes: 2 };

describe('forgetting a subject', () => {
  it.each<DeciderCase<SubjectToForget, SubjectForgotten> & { name: string }>([
    {
      name: 'the request is recorded with the keys and the plain-text notes found',
      when: request,
      then: [{ type: 'SubjectForgotten', data: { subject: 'bob', tenant: 'acme', reason: 'asked', keyIds: [keyId], plaintextNotes: 2 } }],
    },
    {
      name: 'a subject forgotten in every tenant is recorded so',
      when: { ...request, tenant: null },
      then: [{ data: { tenant: null } }],
    },
    {
      name: 'a subject without keys is recorded too: the request itself is the record',
      when: { ...request, keyIds: [], plaintextNotes: 0 },
      then: [{ data: { keyIds: [], plaintextNotes: 0 } }],
    },
  ])('$name', (c) => checkDecider(forgetDecider, c));

  it('decides an event the catalog accepts as it is', () => {
    const [event] = forgetDecider.decide(request, null, unitContext());
    expect(validateEvent(event)).toEqual(event);
  });
});

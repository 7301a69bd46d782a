import { describe, it } from 'vitest';
import {
  ChunkNotFoundError,
  evolveSession,
  InvalidConfigError,
  initialSessionState,
  SessionIncompleteError,
  SessionNotFoundError,
  type AnnotationEvent,
  type SessionState,
} from '../../src/domain/annotations.js';
import type { Decider } from '../../src/engine/commands.js';
import { ValidationError } from '../../src/errors.js';
import { checkDecider, type DeciderCase } from '../../test/support/givenWhenThen.js';
import { decideAddRelation, type AddRelation } from './addRelation.js';
import { decideRenameSession, type RenameSession } from './renameSession.js';
import { decideStartSession, type StartSession } from './startSession.js';

/** A session's decision as a decider: the session stream's fold, and the slice's pure decision. */
const sessionDecider = <C>(
  decide: (command: C, state: SessionState) => AnnotationEvent[],
): Decider<SessionState, C, AnnotationEvent> => ({
  initialState: initialSessionState,
  evolve: evolveSession,
  decide: (command, state) => decide(command, state),
});

const sessionId = '00000000-0000-4000-8000-00000000005e';
const start: StartSession = {
  sessionId,
  name: 'review',
  source: { kind: 'chunks' },
  chunks: [
    { chunkId: 'a', position: 1, text: 'A' },
    { chunkId: 'b', position: 2, text: 'B' },
  ],
};
const started = decideStartSession(start);
/** The session started, before its chunks arrived. */
const [startedOnly] = started;

describe('starting a session', () => {
  it.each<DeciderCase<StartSession, AnnotationEvent> & { name: string }>([
    {
      name: 'a session starts with its chunks, in position order',
      when: start,
      then: [
        { type: 'AnnotationSessionStarted', data: { sessionId, chunkCount: 2 } },
        { type: 'SessionChunksAdded', data: { chunks: [{ chunkId: 'a' }, { chunkId: 'b' }] } },
      ],
    },
    {
      name: 'chunks given out of order are put in order',
      when: { ...start, chunks: [...start.chunks].reverse() },
      then: [
        { type: 'AnnotationSessionStarted' },
        { data: { chunks: [{ chunkId: 'a' }, { chunkId: 'b' }] } },
      ],
    },
    {
      name: 'a session without chunks is refused',
      when: { ...start, chunks: [] },
      throws: InvalidConfigError,
    },
    {
      name: 'a chunk given twice is refused',
      when: { ...start, chunks: [start.chunks[0]!, start.chunks[0]!] },
      throws: InvalidConfigError,
    },
  ])('$name', (c) =>
    checkDecider(
      sessionDecider((command: StartSession) => decideStartSession(command)),
      c,
    ),
  );
});

describe('renaming a session', () => {
  const rename = (name: string): RenameSession => ({ sessionId, name });
  it.each<DeciderCase<RenameSession, AnnotationEvent> & { name: string }>([
    { name: 'an unknown session is not found', when: rename('x'), throws: SessionNotFoundError },
    {
      name: 'a session takes a new name',
      given: started,
      when: rename('audit'),
      then: [{ type: 'SessionRenamed', data: { sessionId, name: 'audit' } }],
    },
    { name: 'the name it has changes nothing', given: started, when: rename('review'), then: [] },
    {
      name: 'a renamed session keeps its latest name',
      given: [...started, { type: 'SessionRenamed', schemaVersion: 1, data: { sessionId, name: 'audit' } }],
      when: rename('audit'),
      then: [],
    },
  ])('$name', (c) => checkDecider(sessionDecider(decideRenameSession), c));
});

describe('relating two chunks', () => {
  const relate = (source: string, target: string): AddRelation => ({
    sessionId,
    sourceChunkId: source,
    targetChunkId: target,
    relationType: 'references',
  });
  const related: AnnotationEvent = { type: 'RelationAdded', schemaVersion: 1, data: relate('a', 'b') };
  it.each<DeciderCase<AddRelation, AnnotationEvent> & { name: string }>([
    { name: 'an unknown session is not found', when: relate('a', 'b'), throws: SessionNotFoundError },
    {
      name: 'a session whose chunks have not all arrived is refused',
      given: [startedOnly!],
      when: relate('a', 'b'),
      throws: SessionIncompleteError,
    },
    {
      name: 'two chunks of the session are related',
      given: started,
      when: relate('a', 'b'),
      then: [
        {
          type: 'RelationAdded',
          data: { sourceChunkId: 'a', targetChunkId: 'b', relationType: 'references' },
        },
      ],
    },
    {
      name: 'a relation that exists changes nothing',
      given: [...started, related],
      when: relate('a', 'b'),
      then: [],
    },
    {
      name: 'the opposite direction is another relation',
      given: [...started, related],
      when: relate('b', 'a'),
      then: [{ type: 'RelationAdded' }],
    },
    {
      name: 'another type between the same chunks is another relation',
      given: [...started, related],
      when: { ...relate('a', 'b'), relationType: 'footnotes' },
      then: [{ data: { relationType: 'footnotes' } }],
    },
    {
      name: 'a chunk is not related to itself',
      given: started,
      when: relate('a', 'a'),
      throws: ValidationError,
    },
    {
      name: 'an unknown source chunk is not found',
      given: started,
      when: relate('z', 'b'),
      throws: ChunkNotFoundError,
    },
    {
      name: 'an unknown target chunk is not found',
      given: started,
      when: relate('a', 'z'),
      throws: ChunkNotFoundError,
    },
  ])('$name', (c) => checkDecider(sessionDecider(decideAddRelation), c));
});

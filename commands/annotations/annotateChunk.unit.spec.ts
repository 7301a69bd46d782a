import { describe, expect, it } from 'vitest';
import {
  DEFAULT_VOCABULARY,
  evolveSession,
  initialSessionState,
  type AnnotationEvent,
  type SessionState,
} from '../../src/domain/annotations.js';
import { isSealedText } from '../../src/domain/protectedText.js';
import { newDataKey, openWith, sealWith } from '../../infra/crypto/sealing.js';
import { decideAddRelation } from './addRelation.js';
import { chunksAnnotated, decideAnnotateChunk, type NoteCipher } from './annotateChunk.js';
import { decideAnnotateChunks } from './annotateChunks.js';
import { decideStartSession } from './startSession.js';

const sessionId = '00000000-0000-4000-8000-000000000001';
const keyId = '00000000-0000-4000-8000-0000000000aa';
const key = newDataKey();
const cipher: NoteCipher = {
  seal: (text) => sealWith(key, keyId, text),
  open: (value) => (isSealedText(value) ? openWith(key, value) : value),
};
/** The same key, forgotten: what it sealed opens to null. */
const forgotten: NoteCipher = { ...cipher, open: (value) => (isSealedText(value) ? null : value) };

const given = (events: AnnotationEvent[]): SessionState =>
  events.reduce((state, event) => evolveSession(state, event), initialSessionState());

/** The event a single-chunk command appends for a decision. */
const eventOf = (decision: ReturnType<typeof decideAnnotateChunk>) =>
  chunksAnnotated(sessionId, decision.annotation ? [decision.annotation] : []);

const started = () =>
  decideStartSession({
    sessionId,
    name: null,
    source: { kind: 'chunks' },
    chunks: [
      { chunkId: 'b', position: 2, text: 'B' },
      { chunkId: 'a', position: 1, text: 'A' },
    ],
  });

describe('annotation session decisions', () => {
  it('starts a session with its chunks in position order', () => {
    const events = started();
    expect(events[0]).toMatchObject({ type: 'AnnotationSessionStarted', data: { chunkCount: 2 } });
    expect(events[1]).toMatchObject({
      type: 'SessionChunksAdded',
      data: { chunks: [{ chunkId: 'a' }, { chunkId: 'b' }] },
    });
  });

  it('refuses duplicate chunk ids and empty sessions', () => {
    const chunk = { chunkId: 'a', position: 0, text: '' };
    expect(() =>
      decideStartSession({ sessionId, name: null, source: { kind: 'chunks' }, chunks: [chunk, chunk] }),
    ).toThrow('Config validation failed');
    expect(() =>
      decideStartSession({ sessionId, name: null, source: { kind: 'chunks' }, chunks: [] }),
    ).toThrow();
  });

  it('records only the fields that changed, and nothing when nothing did', () => {
    const state = given(started());
    const first = decideAnnotateChunk(
      { sessionId, chunkId: 'a', fields: { tags: ['x'], notes: '' } },
      state,
      cipher,
    );
    expect(eventOf(first)).toEqual([
      {
        type: 'ChunkAnnotated',
        schemaVersion: 3,
        data: { sessionId, annotations: [{ chunkId: 'a', changes: { tags: ['x'] } }] },
      },
    ]);
    const after = given([...started(), ...eventOf(first)]);
    expect(
      decideAnnotateChunk({ sessionId, chunkId: 'a', fields: { tags: ['x'] } }, after, cipher).annotation,
    ).toBeNull();
  });

  it('seals notes and summaries in the event, and compares them by their text', () => {
    const decision = decideAnnotateChunk(
      { sessionId, chunkId: 'a', fields: { notes: 'call Ann', summary: 'fees' } },
      given(started()),
      cipher,
    );
    const { changes } = decision.annotation!;
    expect(isSealedText(changes.notes) && isSealedText(changes.summary)).toBe(true);
    expect(JSON.stringify(eventOf(decision))).not.toContain('call Ann');
    expect(decision.chunk).toMatchObject({ notes: 'call Ann', summary: 'fees' });
    const after = given([...started(), ...eventOf(decision)]);
    expect(
      decideAnnotateChunk({ sessionId, chunkId: 'a', fields: { notes: 'call Ann' } }, after, cipher)
        .annotation,
    ).toBeNull();
    const rewritten = decideAnnotateChunk(
      { sessionId, chunkId: 'a', fields: { notes: 'call Ann' } },
      after,
      forgotten,
    );
    expect(rewritten.annotation).not.toBeNull();
    expect(rewritten.chunk).toMatchObject({ notes: 'call Ann', summary: null, forgotten: true });
  });

  it('marks a pending chunk annotated even when its fields stay empty', () => {
    const { annotation } = decideAnnotateChunk(
      { sessionId, chunkId: 'b', fields: {} },
      given(started()),
      cipher,
    );
    expect(annotation).toEqual({ chunkId: 'b', changes: {} });
  });

  it('decides each batch item on the state the items before it left', () => {
    const { events, result } = decideAnnotateChunks(
      sessionId,
      [
        { chunkId: 'a', notes: 'one' },
        { chunkId: 'a', notes: 'one' },
        { chunkId: 'z' },
        { chunkId: 'b', labels: ['Nope'] },
      ],
      given(started()),
      DEFAULT_VOCABULARY,
      cipher,
    );
    // One event for the batch; the repeated item changed nothing, so it adds no annotation.
    expect(events).toMatchObject([{ type: 'ChunkAnnotated', data: { annotations: [{ chunkId: 'a' }] } }]);
    expect(result).toMatchObject({ successCount: 2, errorCount: 2 });
    expect(result.results.map((r) => (r.success ? 'ok' : r.error.type))).toEqual([
      'ok',
      'ok',
      'ChunkNotFound',
      'ValidationError',
    ]);
  });

  it('adds a relation once, and refuses self relations and unknown chunks', () => {
    const state = given(started());
    const relation = {
      sessionId,
      sourceChunkId: 'a',
      targetChunkId: 'b',
      relationType: 'references' as const,
    };
    const events = decideAddRelation(relation, state);
    expect(events).toHaveLength(1);
    expect(decideAddRelation(relation, given([...started(), ...events]))).toEqual([]);
    expect(() => decideAddRelation({ ...relation, targetChunkId: 'a' }, state)).toThrow('itself');
    expect(() => decideAddRelation({ ...relation, targetChunkId: 'q' }, state)).toThrow(
      "Chunk 'q' not found",
    );
    expect(() => decideAddRelation(relation, initialSessionState())).toThrow('not found');
  });
});

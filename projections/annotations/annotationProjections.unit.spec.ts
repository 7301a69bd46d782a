import { describe, expect, it } from 'vitest';
import { decideStartSession } from '../../commands/annotations/startSession.js';
import type { AnnotationEvent } from '../../src/domain/annotations.js';
import { asStored, projectionAfter } from '../../test/support/givenWhenThen.js';
import { annotationChunkLists } from './annotationChunkLists.js';
import { annotationChunkRowId, annotationChunks } from './annotationChunks.js';
import { annotationSessions } from './annotationSessions.js';

const sessionId = '00000000-0000-4000-8000-0000000000a5';
const started = decideStartSession({
  sessionId,
  name: 'review',
  source: { kind: 'chunks' },
  chunks: [
    { chunkId: 'b', position: 2, text: 'B' },
    { chunkId: 'a', position: 1, text: 'A' },
    { chunkId: 'c', position: 3, text: 'C' },
  ],
});
const annotated = (
  ...annotations: { chunkId: string; changes: Record<string, unknown> }[]
): AnnotationEvent =>
  ({ type: 'ChunkAnnotated', schemaVersion: 3, data: { sessionId, annotations } });
const related = (source: string, target: string, relationType = 'references'): AnnotationEvent =>
  ({
    type: 'RelationAdded',
    schemaVersion: 1,
    data: { sessionId, sourceChunkId: source, targetChunkId: target, relationType },
  }) as AnnotationEvent;
const renamed: AnnotationEvent = {
  type: 'SessionRenamed',
  schemaVersion: 1,
  data: { sessionId, name: 'audit' },
};

describe('the annotation_sessions read model', () => {
  it.each<{ name: string; given: AnnotationEvent[]; then: Record<string, unknown> }>([
    {
      name: 'a started session has received its chunks',
      given: started,
      then: { sessionId, name: 'review', totalChunks: 3, receivedChunks: 3, relations: 0, startedBy: 'test' },
    },
    {
      name: 'a session started before its chunks arrive has received none',
      given: started.slice(0, 1),
      then: { totalChunks: 3, receivedChunks: 0 },
    },
    {
      name: 'relations are counted',
      given: [...started, related('a', 'b'), related('b', 'c')],
      then: { relations: 2 },
    },
    { name: 'a renamed session shows its new name', given: [...started, renamed], then: { name: 'audit' } },
    {
      name: 'each event moves its last revision',
      given: [...started, annotated({ chunkId: 'a', changes: { tags: ['x'] } })],
      then: { lastRevision: 2 },
    },
  ])('$name', ({ given, then }) => {
    expect(projectionAfter(annotationSessions, asStored(given)).get(sessionId)).toMatchObject(then);
  });

  it('makes no row for events of a session it never saw start', () => {
    expect(projectionAfter(annotationSessions, asStored([renamed, related('a', 'b')])).size).toBe(0);
  });
});

describe('the annotation_chunks read model', () => {
  const row = (events: AnnotationEvent[], chunkId: string) =>
    projectionAfter(annotationChunks, asStored(events)).get(annotationChunkRowId(sessionId, chunkId));

  it.each<{
    name: string;
    given: AnnotationEvent[];
    chunk: string;
    then: Record<string, unknown> | undefined;
  }>([
    { name: 'a chunk never annotated has no row', given: started, chunk: 'a', then: undefined },
    {
      name: 'an annotated chunk keeps its changes',
      given: [...started, annotated({ chunkId: 'a', changes: { tags: ['x'], summary: 's' } })],
      chunk: 'a',
      then: { annotated: true, tags: ['x'], summary: 's', categories: [] },
    },
    {
      name: 'a later annotation changes only what it names',
      given: [
        ...started,
        annotated({ chunkId: 'a', changes: { tags: ['x'] } }),
        annotated({ chunkId: 'a', changes: { summary: 's' } }),
      ],
      chunk: 'a',
      then: { tags: ['x'], summary: 's' },
    },
    {
      name: 'a chunk annotated twice in one command ends as the later left it',
      given: [
        ...started,
        annotated({ chunkId: 'a', changes: { tags: ['x'] } }, { chunkId: 'a', changes: { tags: ['y'] } }),
      ],
      chunk: 'a',
      then: { tags: ['y'] },
    },
    {
      name: 'one command annotates several chunks',
      given: [
        ...started,
        annotated({ chunkId: 'a', changes: { tags: ['x'] } }, { chunkId: 'b', changes: { tags: ['z'] } }),
      ],
      chunk: 'b',
      then: { tags: ['z'] },
    },
    {
      name: 'a relation is kept on its source chunk, by type',
      given: [...started, related('a', 'b'), related('a', 'c', 'footnotes')],
      chunk: 'a',
      then: { relations: { references: ['b'], footnotes: ['c'] }, annotated: false },
    },
    {
      name: 'a relation given twice is kept once',
      given: [...started, related('a', 'b'), related('a', 'b')],
      chunk: 'a',
      then: { relations: { references: ['b'] } },
    },
    {
      name: 'the target of a relation gets no row for it',
      given: [...started, related('a', 'b')],
      chunk: 'b',
      then: undefined,
    },
  ])('$name', ({ given, chunk, then }) => {
    if (then === undefined) expect(row(given, chunk)).toBeUndefined();
    else expect(row(given, chunk)).toMatchObject(then);
  });
});

describe('the annotation chunk lists read model', () => {
  it('lists a session’s chunks with their positions, in position order', () => {
    expect(projectionAfter(annotationChunkLists, asStored(started)).get(sessionId)).toEqual({
      sessionId,
      chunks: [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ],
    });
  });

  it('lists no chunks before they arrive, and none for a session never started', () => {
    expect(projectionAfter(annotationChunkLists, asStored(started.slice(0, 1))).get(sessionId)).toEqual({
      sessionId,
      chunks: [],
    });
    expect(projectionAfter(annotationChunkLists, asStored(started.slice(1))).size).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import type { DocumentEvent, DocumentIngested } from '../../src/domain/documents.js';
import { NotFoundError } from '../../src/errors.js';
import { checkDecider, stateAfter, type DeciderCase } from '../../test/support/givenWhenThen.js';
import { forgetDocumentDecider, type ForgetDocument } from '../protection/forgetDocument.js';
import { ingestDecider } from './ingestDocument.js';
import { removeDecider } from './removeDocument.js';

const documentId = '00000000-0000-4000-8000-0000000000d1';
const hash = (c: string) => c.repeat(64);

const version = (fields: Partial<DocumentIngested['data']> = {}): DocumentIngested['data'] => ({
  documentId,
  source: 'notes',
  sourceId: 'a.md',
  sourceUrl: null,
  title: 'A',
  author: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  contentType: 'text/markdown',
  tags: [],
  metadata: {},
  bodyHash: hash('a'),
  bodyBytes: 1,
  chunks: [],
  ...fields,
});
const ingested = (fields: Partial<DocumentIngested['data']> = {}): DocumentEvent => ({
  type: 'DocumentIngested',
  schemaVersion: 1,
  data: version(fields),
});
const removed: DocumentEvent = {
  type: 'DocumentRemoved',
  schemaVersion: 1,
  data: { documentId, reason: null },
};
const forgotten: DocumentEvent = {
  type: 'DocumentForgotten',
  schemaVersion: 1,
  data: { documentId, reason: 'asked', versions: 1 },
};
const ingest = (fields: Partial<DocumentIngested['data']> = {}) => ({
  kind: 'ingest' as const,
  data: version(fields),
});

describe('ingesting a document', () => {
  it.each<DeciderCase<ReturnType<typeof ingest>, DocumentEvent> & { name: string }>([
    {
      name: 'a new document is a first version',
      when: ingest(),
      then: [{ type: 'DocumentIngested', data: { documentId } }],
    },
    { name: 'the same version again appends nothing', given: [ingested()], when: ingest(), then: [] },
    {
      name: 'a new body is a new version',
      given: [ingested()],
      when: ingest({ bodyHash: hash('b') }),
      then: [{ type: 'DocumentIngested' }],
    },
    {
      name: 'a new title is a new version',
      given: [ingested()],
      when: ingest({ title: 'B' }),
      then: [{ data: { title: 'B' } }],
    },
    {
      name: 'a new author is a new version',
      given: [ingested()],
      when: ingest({ author: 'ann' }),
      then: [{ data: { author: 'ann' } }],
    },
    {
      name: 'a new url is a new version',
      given: [ingested()],
      when: ingest({ sourceUrl: 'https://x' }),
      then: [{ type: 'DocumentIngested' }],
    },
    {
      name: 'a new content type is a new version',
      given: [ingested()],
      when: ingest({ contentType: 'text/plain' }),
      then: [{ type: 'DocumentIngested' }],
    },
    {
      name: 'new tags are a new version',
      given: [ingested()],
      when: ingest({ tags: ['x'] }),
      then: [{ data: { tags: ['x'] } }],
    },
    {
      name: 'new metadata is a new version',
      given: [ingested()],
      when: ingest({ metadata: { k: 1 } }),
      then: [{ data: { metadata: { k: 1 } } }],
    },
    {
      name: 'only a new update time is not a new version',
      given: [ingested()],
      when: ingest({ updatedAt: '2026-02-01T00:00:00.000Z' }),
      then: [],
    },
    {
      name: 'a removed document comes back',
      given: [ingested(), removed],
      when: ingest(),
      then: [{ type: 'DocumentIngested' }],
    },
    {
      name: 'a forgotten document comes back',
      given: [ingested(), forgotten],
      when: ingest(),
      then: [{ type: 'DocumentIngested' }],
    },
  ])('$name', (c) => checkDecider(ingestDecider, c));

  it('counts versions across removals', () => {
    const state = stateAfter(ingestDecider, [ingested(), removed, ingested(), forgotten]);
    expect(state).toMatchObject({ current: null, versions: 2, forgotten: true });
    expect(stateAfter(ingestDecider, [ingested(), forgotten, ingested()])).toMatchObject({
      versions: 2,
      forgotten: false,
    });
  });
});

describe('removing a document', () => {
  const remove = { documentId, reason: 'gone' };
  it.each<DeciderCase<typeof remove, DocumentEvent> & { name: string }>([
    { name: 'an unknown document is not found', when: remove, throws: NotFoundError },
    {
      name: 'a current document is removed, with the reason',
      given: [ingested()],
      when: remove,
      then: [{ type: 'DocumentRemoved', data: { reason: 'gone' } }],
    },
    { name: 'removing twice appends nothing', given: [ingested(), removed], when: remove, then: [] },
    {
      name: 'a forgotten document has nothing left to remove',
      given: [ingested(), forgotten],
      when: remove,
      then: [],
    },
    {
      name: 'a document ingested again after removal is removed again',
      given: [ingested(), removed, ingested()],
      when: remove,
      then: [{ type: 'DocumentRemoved' }],
    },
  ])('$name', (c) => checkDecider(removeDecider, c));
});

describe('forgetting a document', () => {
  const forget: ForgetDocument = { documentId, reason: 'asked' };
  it.each<DeciderCase<ForgetDocument, DocumentEvent> & { name: string }>([
    { name: 'an unknown document is not found', when: forget, throws: `No document '${documentId}'` },
    {
      name: 'it records how many versions are forgotten',
      given: [ingested(), ingested({ title: 'B' })],
      when: forget,
      then: [{ type: 'DocumentForgotten', data: { versions: 2, reason: 'asked' } }],
    },
    {
      name: 'a removed document is still forgotten',
      given: [ingested(), removed],
      when: forget,
      then: [{ type: 'DocumentForgotten', data: { versions: 1 } }],
    },
    { name: 'forgetting twice appends nothing', given: [ingested(), forgotten], when: forget, then: [] },
    {
      name: 'a document ingested again after forgetting is forgotten again',
      given: [ingested(), forgotten, ingested()],
      when: forget,
      then: [{ data: { versions: 2 } }],
    },
  ])('$name', (c) => checkDecider(forgetDocumentDecider, c));
});

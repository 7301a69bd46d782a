import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/domain/events.js';
import { NotFoundError } from '../../src/errors.js';
import { checkDecider, stateAfter, type DeciderCase } from '../../test/support/givenWhenThen.js';
import { connectorOfSyncJob, connectorSyncDecider, syncJobPath, type SyncStep } from './syncConnector.js';

const connectorId = '00000000-0000-4000-8000-0000000000c1';
const jobId = '00000000-0000-4000-8000-0000000000b1';
type ConnectorEvent = Extract<DomainEvent, { type: `Connector${string}` }>;

const added: ConnectorEvent = {
  type: 'ConnectorAdded',
  schemaVersion: 1,
  data: { connectorId, name: 'issues', kind: 'github', settings: { repo: 'a/b' } },
};
const removed: ConnectorEvent = { type: 'ConnectorRemoved', schemaVersion: 1, data: { connectorId } };
const checkpointed = (cursor: Record<string, unknown>): ConnectorEvent => ({
  type: 'ConnectorSyncCheckpointed',
  schemaVersion: 1,
  data: { connectorId, jobId, cursor },
});
const checkpoint = (cursor: Record<string, unknown>): SyncStep => ({
  kind: 'checkpoint',
  connectorId,
  jobId,
  cursor,
});
const complete: SyncStep = {
  kind: 'complete',
  connectorId,
  jobId,
  cursor: { since: 't2' },
  itemsSeen: 3,
  documentsChanged: 2,
  documentsRemoved: 1,
};
const fail: SyncStep = { kind: 'fail', connectorId, jobId, code: 'UPSTREAM', message: 'rate limited' };

describe('recording the steps of a connector sync', () => {
  it.each<DeciderCase<SyncStep, ConnectorEvent> & { name: string }>([
    { name: 'an unknown connector is not found', when: checkpoint({ page: 2 }), throws: NotFoundError },
    {
      name: 'a removed connector is not found',
      given: [added, removed],
      when: complete,
      throws: `No connector with id ${connectorId}`,
    },
    {
      name: 'a first checkpoint is recorded',
      given: [added],
      when: checkpoint({ page: 2 }),
      then: [{ type: 'ConnectorSyncCheckpointed', data: { cursor: { page: 2 } } }],
    },
    {
      name: 'an unchanged cursor records nothing',
      given: [added, checkpointed({ page: 2 })],
      when: checkpoint({ page: 2 }),
      then: [],
    },
    {
      name: 'a moved cursor is recorded',
      given: [added, checkpointed({ page: 2 })],
      when: checkpoint({ page: 3 }),
      then: [{ data: { cursor: { page: 3 } } }],
    },
    {
      name: 'a completed sync records its counts',
      given: [added],
      when: complete,
      then: [
        { type: 'ConnectorSyncCompleted', data: { itemsSeen: 3, documentsChanged: 2, documentsRemoved: 1 } },
      ],
    },
    {
      name: 'a failed sync records its error',
      given: [added, checkpointed({ page: 1 })],
      when: fail,
      then: [{ type: 'ConnectorSyncFailed', data: { code: 'UPSTREAM', message: 'rate limited' } }],
    },
  ])('$name', (c) => checkDecider(connectorSyncDecider, c));

  it('resumes from the last cursor recorded, whatever failed after it', () => {
    const failed: ConnectorEvent = {
      type: 'ConnectorSyncFailed',
      schemaVersion: 1,
      data: { connectorId, jobId, code: 'x', message: 'y' },
    };
    expect(stateAfter(connectorSyncDecider, [added, checkpointed({ page: 4 }), failed]).cursor).toEqual({
      page: 4,
    });
  });

  it('names a sync job by its connector, and reads the connector back', () => {
    expect(connectorOfSyncJob(syncJobPath(connectorId))).toBe(connectorId);
    expect(connectorOfSyncJob('/srv/repo')).toBeNull();
  });
});

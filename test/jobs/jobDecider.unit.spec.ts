import { describe, expect, it } from 'vitest';
import { jobDecider, type CancelJob, type JobTransition } from '../../src/services/jobDecider.js';
import type { JobState } from '../../src/domain/jobs.js';
import { START } from '../../src/domain/position.js';
import { commandContext } from '../../src/engine/commands.js';
import { IllegalStateError } from '../../src/errors.js';
import { testMetadata } from '../support/events.js';

const jobId = crypto.randomUUID();
const context = commandContext({ subject: 'test', tenant: null, via: 'system' });
const steps: Record<string, JobTransition | CancelJob> = {
  request: { type: 'IndexingJobRequested', data: { repoPath: '/r', forceReindex: false, include: [], exclude: [] } },
  start: { type: 'IndexingJobStarted', data: { runnerId: 'r1' } },
  block: { type: 'IndexingJobBlocked', data: { reason: 'embedder down' } },
  unblock: { type: 'IndexingJobUnblocked', data: {} },
  complete: { type: 'IndexingJobCompleted', data: { filesScanned: 1, filesIndexed: 1, chunksCreated: 1, filesSkipped: 0, filesRemoved: 0 } },
  fail: { type: 'IndexingJobFailed', data: { errorType: 'StorageError', errorMessage: 'disk full' } },
  cancelled: { type: 'IndexingJobCancelled', data: {} },
  cancel: { type: 'CancelJob' },
};

/** Folds the named steps, deciding each against the state so far. */
const given = (...names: string[]): JobState =>
  names.reduce((state, name, i) => {
    const events = jobDecider.decide({ ...steps[name]!, jobId }, state, context);
    return events.reduce(
      (s, e) => jobDecider.evolve(s, { ...e, streamId: 'job', revision: BigInt(i), position: START, metadata: testMetadata(), recordedAt: '' }),
      state,
    );
  }, jobDecider.initialState());
const decide = (state: JobState, name: string) => jobDecider.decide({ ...steps[name]!, jobId }, state, context);

describe('the job state machine', () => {
  it.each([
    [['request'], 'pending'],
    [['request', 'start'], 'running'],
    [['request', 'start', 'start'], 'running'],
    [['request', 'start', 'complete'], 'completed'],
    [['request', 'start', 'fail'], 'failed'],
    [['request', 'start', 'block'], 'blocked'],
    [['request', 'start', 'block', 'unblock'], 'running'],
    [['request', 'start', 'block', 'start'], 'running'],
    [['request', 'cancel'], 'cancelled'],
    [['request', 'start', 'cancel', 'cancelled'], 'cancelled'],
  ])('allows %j, ending %s', (names, status) => {
    expect(given(...names).status).toBe(status);
  });

  it.each([
    [[], 'start'],
    [['request'], 'request'],
    [['request'], 'complete'],
    [['request'], 'block'],
    [['request', 'start'], 'unblock'],
    [['request', 'start', 'complete'], 'start'],
    [['request', 'start', 'complete'], 'cancel'],
    [['request', 'start', 'fail'], 'complete'],
    [['request', 'cancel'], 'start'],
    [['request', 'cancel'], 'cancel'],
  ])('after %j refuses %s with an illegal state', (names, step) => {
    expect(() => decide(given(...names), step)).toThrow(IllegalStateError);
  });

  it('asks a running job to stop rather than cancelling it outright, and asks only once', () => {
    const running = given('request', 'start');
    expect(decide(running, 'cancel').map((e) => e.type)).toEqual(['IndexingJobCancellationRequested']);
    expect(decide(given('request', 'start', 'cancel'), 'cancel')).toEqual([]);
  });

  it('completes a job only when every scanned file is indexed, skipped or failed', () => {
    const running = given('request', 'start');
    const complete = (data: { filesScanned: number; filesIndexed: number; filesSkipped: number; filesFailed: number }) =>
      jobDecider.decide({ type: 'IndexingJobCompleted', jobId, data: { ...data, chunksCreated: 0, filesRemoved: 0 } }, running, context);
    expect(complete({ filesScanned: 1842, filesIndexed: 1119, filesSkipped: 1, filesFailed: 722 })).toHaveLength(1);
    expect(() => complete({ filesScanned: 1842, filesIndexed: 1119, filesSkipped: 1, filesFailed: 0 })).toThrow(
      'A completed job must account for every scanned file: 1842 scanned, but 1119 indexed, 1 skipped and 0 failed',
    );
  });
});

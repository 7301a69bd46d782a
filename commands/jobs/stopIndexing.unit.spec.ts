import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../../src/errors.js';
import type { OperationContext } from '../../src/operations.js';
import type { IndexJobItem, IndexJobs } from '../../src/ports/indexJobs.js';
import { stopIndexingOperation } from './stopIndexing.js';

const context: OperationContext = {
  actor: { subject: 'test', tenant: null, via: 'system' },
  correlationId: 'c0ffee00-0000-4000-8000-000000000000',
  project: 'default',
};

const item = (job_id: string, status: string): IndexJobItem => ({
  job_id,
  repo_path: `/repo/${job_id}`,
  status,
  progress_percentage: 10,
  files_indexed: 1,
  created_at: '2026-01-02T03:04:05.000Z',
});

/** The project's jobs as listed; `ended` ones fail between the list and the cancel. */
const jobsWith = (listed: IndexJobItem[], ended: ReadonlySet<string>) => {
  const cancelled: string[] = [];
  const jobs: IndexJobs = {
    list: (_context, status) => Promise.resolve(listed.filter((j) => j.status === status)),
    index: () => Promise.reject(new Error('not used')),
    sync: () => Promise.reject(new Error('not used')),
    cancel: (jobId) => {
      if (ended.has(jobId)) return Promise.reject(new IllegalStateError(`Cannot cancel job in status 'failed'`));
      cancelled.push(jobId);
      return Promise.resolve();
    },
  };
  return { jobs, cancelled };
};

describe('index.stop', () => {
  it('stops every other job when one ended meanwhile, and says which was not stopped and why', async () => {
    const { jobs, cancelled } = jobsWith([item('a', 'running'), item('b', 'running'), item('c', 'blocked')], new Set(['a']));
    const answer = await stopIndexingOperation(jobs).run({}, context);
    expect(cancelled.sort()).toEqual(['b', 'c']);
    expect(answer).toMatchObject({ status: 'stopping', job_ids: ['b', 'c'] });
    expect(answer.jobs).toEqual([
      { job_id: 'a', outcome: 'not_stopped', message: "Cannot cancel job in status 'failed'" },
      { job_id: 'b', outcome: 'stopping', message: 'Cancellation requested' },
      { job_id: 'c', outcome: 'stopping', message: 'Cancellation requested' },
    ]);
  });

  it('answers idle, naming the job, when the only one ended meanwhile', async () => {
    const { jobs } = jobsWith([item('a', 'pending')], new Set(['a']));
    expect(await stopIndexingOperation(jobs).run({}, context)).toMatchObject({
      status: 'idle',
      job_ids: [],
      jobs: [{ job_id: 'a', outcome: 'not_stopped' }],
    });
  });
});

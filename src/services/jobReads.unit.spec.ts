import { describe, expect, it } from 'vitest';
import { jobsProjection } from '../../projections/jobs/jobs.js';
import { asStored, projectionAfter, unitContext } from '../../test/support/givenWhenThen.js';
import type { ReadModels } from '../ports/projections.js';
import { jobDecider } from './jobDecider.js';
import { cancelledJobs } from './jobReads.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('cancelled jobs, as the semantic index sets their chunks aside', () => {
  type Step = Parameters<typeof jobDecider.decide>[0];
  /** The jobs read model after each job's steps, as read models answer it. */
  const readModelsAfter = (jobs: Record<string, Step['type'][]>): ReadModels => {
    const events = Object.entries(jobs).flatMap(([jobId, types]) => {
      let state = jobDecider.initialState();
      return types.flatMap((type) => {
        const step = {
          type,
          jobId,
          data:
            type === 'IndexingJobRequested'
              ? { repoPath: `/srv/${jobId}`, forceReindex: false, include: [], exclude: [] }
              : type === 'IndexingJobStarted'
                ? { runnerId: 'r1' }
                : {},
        } as Step;
        const made = jobDecider.decide(step, state, unitContext());
        state = asStored(made).reduce((s, e) => jobDecider.evolve(s, e), state);
        return made;
      });
    });
    const views = projectionAfter(jobsProjection, asStored(events));
    const unread = () => Promise.reject(new Error('only the jobs are read, by id'));
    return {
      getMany: <Doc>(collection: string, ids: readonly string[]) => {
        expect(collection).toBe(jobsProjection.name);
        return Promise.resolve(new Map(ids.flatMap((jobId) => (views.has(jobId) ? [[jobId, views.get(jobId) as Doc]] : []))));
      },
      get: unread,
      find: unread,
      count: unread,
    };
  };

  it('counts a job whose cancel is asked for until it ends, and a cancelled one, each under its repository', async () => {
    const readModels = readModelsAfter({
      [id(31)]: ['IndexingJobRequested', 'IndexingJobStarted', 'IndexingJobCancellationRequested'],
      [id(32)]: ['IndexingJobRequested', 'IndexingJobCancelled'],
      [id(33)]: ['IndexingJobRequested', 'IndexingJobStarted'],
    });
    const cancelled = await cancelledJobs(readModels, () => true)([id(31), id(32), id(33), id(34)]);
    expect(cancelled).toEqual(
      new Map([
        [id(31), `/srv/${id(31)}`],
        [id(32), `/srv/${id(32)}`],
      ]),
    );
  });

  it('counts none where the deployment has no jobs', async () => {
    const readModels = readModelsAfter({ [id(32)]: ['IndexingJobRequested', 'IndexingJobCancelled'] });
    expect(await cancelledJobs(readModels, () => false)([id(32)])).toEqual(new Map());
  });
});

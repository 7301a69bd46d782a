import { describe, expect, it } from 'vitest';
import { InvalidConfigError, SessionIncompleteError, SessionNotFoundError } from '../domain/annotations.js';
import { DuplicateJobError } from '../domain/jobs.js';
import {
  AppError,
  ConcurrencyError,
  DatabaseUnavailableError,
  ERROR_CATALOGUE,
  IllegalStateError,
  InsufficientStorageError,
  NotFoundError,
  UnavailableError,
  ValidationError,
  type ErrorCode,
} from '../errors.js';
import type { McpErrorObjects } from '../operations.js';
import { silentLogger } from '../ports/logger.js';
import { toolFailure } from './toolResult.js';

const answer = (error: unknown, objects?: McpErrorObjects) => {
  const result = toolFailure(error, silentLogger, 'c-1', objects);
  expect(result.isError).toBe(true);
  return JSON.parse((result.content[0] as { text: string }).text) as unknown;
};

const MASKED = 'Internal error (correlation id c-1)';

describe('the MCP mapper', () => {
  describe("tools whose specification fixes no error object answer the catalogue's", () => {
    it.each(Object.keys(ERROR_CATALOGUE))('%s', (code) => {
      const shown = code !== 'INTERNAL_ERROR';
      expect(answer(new AppError(code as ErrorCode, 'what went wrong', { field: 'q' }))).toEqual({
        error: shown ? { code, message: 'what went wrong', details: { field: 'q' } } : { code, message: MASKED },
      });
    });

    it('masks what is not an AppError', () => {
      expect(answer(new Error('secret'))).toEqual({ error: { code: 'INTERNAL_ERROR', message: MASKED } });
    });
  });

  describe("the job tools answer their ErrorResponse", () => {
    const JOBS: [string, unknown, unknown][] = [
      [
        'bad input names its field, value and a fix',
        new ValidationError('Repository path must be absolute: relative/path', { field: 'repo_path', value: 'relative/path' }),
        {
          code: 'VALIDATION_ERROR',
          message: 'Repository path must be absolute: relative/path',
          details: {
            field: 'repo_path',
            value: 'relative/path',
            suggestion: "Provide absolute path starting with '/' (POSIX) or drive letter (Windows)",
          },
        },
      ],
      ['a missing job', new NotFoundError('Job not found: j-1', { job_id: 'j-1' }), { code: 'JOB_NOT_FOUND', message: 'Job not found: j-1', details: { job_id: 'j-1' } }],
      ['a duplicate', new DuplicateJobError('Already indexing', { job_id: 'j-2' }), { code: 'DUPLICATE_JOB', message: 'Already indexing', details: { job_id: 'j-2' } }],
      ['a job in the wrong status', new IllegalStateError('Cannot cancel', { current_status: 'completed' }), { code: 'INVALID_STATUS', message: 'Cannot cancel', details: { current_status: 'completed' } }],
      [
        'a lost database',
        new DatabaseUnavailableError('Database unreachable'),
        { code: 'DATABASE_ERROR', message: 'Database unreachable', details: { error_type: 'DatabaseUnavailableError' } },
      ],
      [
        'a full disk',
        new InsufficientStorageError('Disk full'),
        { code: 'DATABASE_ERROR', message: 'Disk full', details: { error_type: 'InsufficientStorageError' } },
      ],
      ['another service down', new UnavailableError('Embedder down'), { code: 'CONNECTION_ERROR', message: 'Embedder down' }],
      [
        'anything unexpected',
        new Error('secret'),
        { code: 'DATABASE_ERROR', message: MASKED, details: { suggestion: 'Retry the request; if it keeps failing, check the server log' } },
      ],
    ];
    it.each(JOBS)('%s', (_, error, expected) => {
      expect(answer(error, 'jobs')).toEqual({ error: expected });
    });
  });

  describe("the annotation tools answer their error object with its type discriminator", () => {
    const issues = [{ path: ['chunks'], message: 'chunk ids must be unique', code: 'custom' }];
    const ANNOTATIONS: [string, unknown, unknown][] = [
      ['bad config, with its issues', new InvalidConfigError(issues), { type: 'InvalidConfig', message: 'Config validation failed', issues }],
      ['a missing session', new SessionNotFoundError('s-1'), { type: 'SessionNotFound', message: "Session 's-1' not found" }],
      ['an incomplete session', new SessionIncompleteError('s-1', 1, 2), { type: 'SessionIncomplete', message: "Session 's-1' has 1 of its 2 chunks: it was never completely created" }],
      ['a conflict', new ConcurrencyError('annotation-s-1', '3', '4'), { type: 'ConcurrencyError', message: "Stream 'annotation-s-1' is at revision 4, expected 3" }],
      ['anything unexpected', new Error('secret'), { type: 'InternalError', message: MASKED }],
    ];
    it.each(ANNOTATIONS)('%s', (_, error, expected) => {
      expect(answer(error, 'annotations')).toEqual(expected);
    });
  });

  describe("the tool API's tools over MCP answer its objects", () => {
    it.each([
      [new ValidationError('query: required'), { code: 'bad_request', message: 'query: required' }],
      [new NotFoundError('No document d-1'), { code: 'not_found', message: 'No document d-1' }],
      [new AppError('EMBEDDINGS_DISABLED', 'No embedder'), { code: 'embeddings_disabled', message: 'No embedder' }],
      [new Error('secret'), { code: 'internal', message: MASKED }],
    ])('%s', (error, expected) => {
      expect(answer(error, 'tools')).toEqual({ error: expected });
    });
  });
});

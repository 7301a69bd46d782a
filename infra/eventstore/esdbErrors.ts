import {
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  NotLeaderError,
  UnavailableError as EsdbUnavailableError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import { ConcurrencyError, PayloadTooLargeError, UnavailableError } from '../../src/errors.js';
import type { ExpectedRevision } from '../../src/ports/eventStore.js';
import { describeCurrentRevision } from './esdbMapping.js';

export interface AppendErrorContext {
  streamId: string;
  expected: ExpectedRevision;
}

/** An EventStoreDB client error as the port's error; anything unrecognised passes through. */
export const translateEsdbError = (error: unknown, append?: AppendErrorContext): unknown => {
  if (error instanceof WrongExpectedVersionError && append) {
    return new ConcurrencyError(
      append.streamId,
      String(append.expected),
      describeCurrentRevision(error.actualState),
    );
  }
  if (error instanceof MaxAppendSizeExceededError) {
    return new PayloadTooLargeError(`EventStoreDB refused the append: ${error.message}`, {
      ...(append ? { streamId: append.streamId } : {}),
      limit: error.maxAppendSize,
    });
  }
  if (
    error instanceof EsdbUnavailableError ||
    error instanceof DeadlineExceededError ||
    error instanceof NotLeaderError
  ) {
    return new UnavailableError(`EventStoreDB is unavailable: ${error.message}`, { cause: error });
  }
  return error;
};

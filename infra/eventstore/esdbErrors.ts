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

/**
 * Why the client gave up. Its reads say only their error's name ("UnavailableError") when no
 * connection could be made; the setting to check says more then.
 */
const reasonOf = (error: Error): string =>
  error.message && error.message !== error.constructor.name
    ? error.message
    : `no connection could be made (${error.constructor.name}); check that the server runs and that storage.eventstore_url reaches it`;

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
    return new UnavailableError(`EventStoreDB is unavailable: ${reasonOf(error)}`, { cause: error });
  }
  return error;
};

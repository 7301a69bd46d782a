import { messages } from '@electric-sql/pglite';
import { InsufficientStorageError } from '../../src/errors.js';

/** An error as it crosses between threads: its kind, name, message, own fields and cause. */
export interface SentError {
  kind: 'DatabaseError' | 'InsufficientStorageError' | 'Error';
  name: string;
  message: string;
  stack?: string;
  /** Own fields with cloneable values: a SQLSTATE `code`, `detail`, `constraint`, an errno... */
  fields: Record<string, unknown>;
  cause?: SentError;
}

const cloneable = (value: unknown): boolean =>
  value === null || ['string', 'number', 'boolean', 'bigint', 'undefined'].includes(typeof value) ||
  (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype);

/** Threads clone an Error as its message alone: this keeps what callers inspect (`code` above all). */
export const sendError = (error: unknown): SentError => {
  if (!(error instanceof Error)) return { kind: 'Error', name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) if (key !== 'cause' && cloneable(value)) fields[key] = value;
  return {
    kind:
      error instanceof messages.DatabaseError
        ? 'DatabaseError'
        : error instanceof InsufficientStorageError
          ? 'InsufficientStorageError'
          : 'Error',
    name: error.name,
    message: error.message,
    stack: error.stack,
    fields,
    cause: error.cause === undefined ? undefined : sendError(error.cause),
  };
};

/** The error again, of the same class where a caller may test for it. */
export const receiveError = (sent: SentError): Error => {
  const cause = sent.cause && receiveError(sent.cause);
  const error =
    sent.kind === 'InsufficientStorageError'
      ? new InsufficientStorageError(sent.message, { cause, details: sent.fields.details as Record<string, unknown> })
      : sent.kind === 'DatabaseError'
        ? Object.assign(new messages.DatabaseError(sent.message, 0, 'error'), sent.fields)
        : Object.assign(new Error(sent.message, cause && { cause }), sent.fields, { name: sent.name });
  if (sent.stack !== undefined) error.stack = sent.stack;
  return error;
};

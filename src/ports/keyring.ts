import type { Actor } from '../domain/metadata.js';
import { AppError } from '../errors.js';
import { isSealedText, type Opener, type ProtectedText, type Sealer } from '../domain/protectedText.js';

/**
 * Data keys per subject (an author within a tenant), kept outside the event log and wrapped with
 * the master key. Forgetting a subject deletes its keys: whatever was sealed with them becomes
 * unreadable on every surface at once, while the events that hold it stay exactly as written.
 */
export interface Keyring {
  /** Seals with the live key of the actor's subject within its tenant, made on first use. */
  sealer(actor: Actor): Promise<Sealer>;
  /** Opens the given values, loading each key they name once. */
  opener(values: Iterable<ProtectedText>): Promise<Opener>;
  /** The live keys of a subject: within one tenant, or in every tenant when `tenant` is null. */
  liveKeys(subject: string, tenant: string | null): Promise<string[]>;
  /** Deletes these keys for good, no copy left in the database's files; answers how many were still live. */
  forget(keyIds: readonly string[]): Promise<number>;
}

/** A sealed value names a key the key table never had: events were copied without their keys. */
export class DataKeyMissingError extends AppError {
  override name = 'DataKeyMissingError';
  constructor(keyId: string) {
    super(
      'INTERNAL_ERROR',
      `Data key ${keyId} is not in the key table: the events were copied or restored without the keys they were sealed with`,
      { keyId },
    );
  }
}

/** The wrapped keys do not open with this master key. */
export class MasterKeyMismatchError extends AppError {
  override name = 'MasterKeyMismatchError';
  constructor(options?: { cause?: unknown }) {
    super(
      'INTERNAL_ERROR',
      'The data keys cannot be unwrapped: the master key (auth.secrets_key, else auth.jwt_secret, else ' +
        '<data_dir>/secrets.key) is not the one they were made with',
      undefined,
      options,
    );
  }
}

/** The distinct key ids that sealed values name. */
export const keyIdsOf = (values: Iterable<ProtectedText>): string[] => {
  const ids = new Set<string>();
  for (const value of values) if (isSealedText(value)) ids.add(value.keyId);
  return [...ids];
};

import { CONFIG_FILE_NAME, SECRETS_KEY_FILE } from '../../src/domain/ledgerFiles.js';

/**
 * Files every connector passes over, whatever its options: what they hold would be served to
 * anyone who can search, an agent among them. Told by name before a file is read, by content after.
 */

/** `.env`, `.env.production` and direnv's `.envrc`, not the examples that document them (`.env.example`). */
const ENVIRONMENT_FILE = /^\.env(rc|\.[^/]+)?$/;
const ENVIRONMENT_EXAMPLE = /\.(example|sample|template|dist)$/;

/**
 * A PEM or OpenSSH private key, or a PGP private key block: its armour, any header lines, then a
 * body of base64 long enough to be a key (a placeholder in a document is not).
 */
const PRIVATE_KEY =
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----\r?\n(?:[A-Za-z-]+: [^\n]*\r?\n)*(?:\r?\n)?[A-Za-z0-9+/=\r\n]{64}/;

/** Why a file is passed over by its name alone; null for any other. */
export const secretFileByName = (path: string): string | null => {
  const name = path.split('/').pop() ?? '';
  if (name === CONFIG_FILE_NAME) return 'a Context Ledger configuration file (it may hold keys)';
  // The ledger's master key, in a data directory that is not marked (a folder of the user's).
  if (name === SECRETS_KEY_FILE) return 'a key file';
  if (ENVIRONMENT_FILE.test(name) && !ENVIRONMENT_EXAMPLE.test(name))
    return 'an environment file (it may hold secrets)';
  return null;
};

/** Why a file is passed over for what it holds; null for any other. */
export const secretFileByContent = (text: string): string | null =>
  text.includes('PRIVATE KEY') && PRIVATE_KEY.test(text) ? 'it holds a private key' : null;

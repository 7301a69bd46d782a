/** The configuration file `ctx` reads from the working directory; it may hold the ledger's keys. */
export const CONFIG_FILE_NAME = 'ctx.toml';

/** In a data directory: the embedded database's own directory. */
export const DATABASE_DIR = 'pgdata';
/** In a data directory: the master key, made there when no key is configured. */
export const SECRETS_KEY_FILE = 'secrets.key';
/** In a data directory: the lock of the process that has it open. */
export const LOCK_FILE = 'ctx.lock';
/** In a data directory: where the server holding it listens, and the secret it proves itself with. */
export const SERVER_FILE = 'server.json';

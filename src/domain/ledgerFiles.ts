/** The configuration file `ctx` reads from the working directory; it may hold the ledger's keys. */
export const CONFIG_FILE_NAME = 'ctx.toml';

/** The master key's file in a data directory, made there when no key is configured. */
export const SECRETS_KEY_FILE = 'secrets.key';

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SECRETS_KEY_FILE } from '../../src/domain/ledgerFiles.js';
import { isSealed, isSecretField, type Sealed } from '../../src/domain/secrets.js';
import { AppError } from '../../src/errors.js';
import type { SecretBox } from '../../src/ports/secretBox.js';
import { markDataDir } from '../dataDirMarker.js';

/** Where the master key comes from: the configured key, else a file in the data directory. */
interface KeySettings {
  storage: { dataDir: string };
  auth: { secretsKey?: string | null | undefined; jwtSecret?: string | null | undefined };
}

const keyFileOf = (config: KeySettings) => path.join(config.storage.dataDir, SECRETS_KEY_FILE);
const configuredKey = (config: KeySettings) => config.auth.secretsKey ?? config.auth.jwtSecret;

/** The master key file is gone while data sealed with it remains: a new key would leave that data unreadable. */
export class SecretsKeyMissingError extends AppError {
  override name = 'SecretsKeyMissingError';
  constructor(file: string) {
    super(
      'CONFIG_ERROR',
      `The master key file ${file} is missing, but this data directory holds data sealed with it. ` +
        'Restore the file (from a backup of the data directory), or, if the data was sealed with a configured key, ' +
        'set auth.secrets_key (CTX_AUTH__SECRETS_KEY) to it; the server does not make a new key over sealed data',
      { file },
    );
  }
}

/**
 * Makes `<data_dir>/secrets.key` on first use when no key is configured; refuses when the file is
 * missing but `hasSealedData` finds data sealed under the key it held.
 */
export const ensureSecretsKeyFile = async (config: KeySettings, hasSealedData: () => Promise<boolean>): Promise<void> => {
  if (configuredKey(config)) return;
  const file = keyFileOf(config);
  if (existsSync(file)) return;
  if (await hasSealedData()) throw new SecretsKeyMissingError(path.resolve(file));
  mkdirSync(config.storage.dataDir, { recursive: true });
  markDataDir(config.storage.dataDir);
  try {
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
};

/** The key: `auth.secrets_key`, else derived from `jwt_secret`, else the key file kept in the data directory. */
const keyOf = (config: KeySettings): Buffer => {
  const material = configuredKey(config);
  if (material) return createHash('sha256').update(`context-ledger-secrets:${material}`).digest();
  const file = keyFileOf(config);
  if (!existsSync(file)) throw new SecretsKeyMissingError(path.resolve(file));
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
};

export const createSecretBox = (config: KeySettings): SecretBox => {
  const key = keyOf(config);
  const sealValue = (value: unknown): Sealed => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return {
      sealed: [
        'v1',
        iv.toString('base64'),
        cipher.getAuthTag().toString('base64'),
        data.toString('base64'),
      ].join(':'),
    };
  };
  const openValue = ({ sealed }: Sealed): unknown => {
    const [, iv, tag, data] = sealed.split(':');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv ?? '', 'base64'));
    decipher.setAuthTag(Buffer.from(tag ?? '', 'base64'));
    return JSON.parse(
      Buffer.concat([decipher.update(Buffer.from(data ?? '', 'base64')), decipher.final()]).toString('utf8'),
    );
  };
  const walk = (value: unknown, onSecret: (v: unknown) => unknown, name = ''): unknown => {
    if (name && isSecretField(name) && value !== null && value !== undefined) return onSecret(value);
    if (Array.isArray(value)) return value.map((v) => walk(v, onSecret));
    if (value && typeof value === 'object' && !isSealed(value)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, onSecret, k)]));
    }
    return value;
  };
  return {
    seal: (settings) => walk(settings, (v) => (isSealed(v) ? v : sealValue(v))) as Record<string, unknown>,
    open: (settings) => walk(settings, (v) => (isSealed(v) ? openValue(v) : v)) as Record<string, unknown>,
  };
};

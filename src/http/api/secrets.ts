import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.js';

/** Settings whose values are secrets: sealed in events, never shown in responses. */
export const isSecretField = (name: string) =>
  /token|secret|password|passphrase|api_?key|credential|private_?key/i.test(name);

export const REDACTED = '***';

interface Sealed {
  sealed: string;
}
const isSealed = (value: unknown): value is Sealed =>
  typeof value === 'object' && value !== null && typeof (value as Sealed).sealed === 'string';

/** AES-256-GCM over connector secrets. */
export interface SecretBox {
  seal(settings: Record<string, unknown>): Record<string, unknown>;
  open(settings: Record<string, unknown>): Record<string, unknown>;
}

/** The key: `auth.secrets_key`, else derived from `jwt_secret`, else a key file kept in the data directory. */
const keyOf = (config: Config): Buffer => {
  const material = config.auth.secretsKey ?? config.auth.jwtSecret;
  if (material) return createHash('sha256').update(`context-ledger-secrets:${material}`).digest();
  const file = path.join(config.storage.dataDir, 'secrets.key');
  if (!existsSync(file)) {
    mkdirSync(config.storage.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
};

export const createSecretBox = (config: Config): SecretBox => {
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

/** Settings as a response shows them: every secret (sealed or not) as `***`. */
export const redactSecrets = (value: unknown, name = ''): unknown => {
  if (name && isSecretField(name) && value !== null && value !== undefined) return REDACTED;
  if (isSealed(value)) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactSecrets(v, k)]));
  }
  return value;
};

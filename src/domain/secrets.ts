/** Settings whose values are secrets: sealed in events, never shown in responses. */
export const isSecretField = (name: string) =>
  /token|secret|password|passphrase|api_?key|credential|private_?key/i.test(name);

export const REDACTED = '***';

export interface Sealed {
  sealed: string;
}
export const isSealed = (value: unknown): value is Sealed =>
  typeof value === 'object' && value !== null && typeof (value as Sealed).sealed === 'string';

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

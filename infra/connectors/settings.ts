import { ConnectorNotConfiguredError } from '../../src/ports/remoteSource.js';

/** A connector setting that must be a non-empty string. */
export const requiredString = (settings: Record<string, unknown>, field: string, kind: string, hint: string): string => {
  const value = settings[field];
  if (typeof value === 'string' && value.trim()) return value.trim();
  throw new ConnectorNotConfiguredError(`The ${kind} connector needs the '${field}' setting: ${hint}`, { field });
};

export const optionalString = (settings: Record<string, unknown>, field: string): string | undefined => {
  const value = settings[field];
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
};

export const flag = (settings: Record<string, unknown>, field: string, fallback: boolean): boolean =>
  typeof settings[field] === 'boolean' ? (settings[field]) : fallback;

export const stringList = (settings: Record<string, unknown>, field: string): string[] => {
  const value = settings[field];
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((v) => typeof v === 'string' && v.trim()))
    throw new ConnectorNotConfiguredError(`The '${field}' setting must be a list of names`, { field });
  return (list as string[]).map((v) => v.trim());
};

import { onOneLine } from './terminalText.js';

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null | undefined;
}

/** Rows under upper-case headers, columns two spaces apart; `empty` when there are no rows. */
export const table = <T>(columns: readonly Column<T>[], rows: readonly T[], empty = 'Nothing to show.'): string => {
  if (rows.length === 0) return empty;
  const cells = [
    columns.map((c) => c.header.toUpperCase()),
    ...rows.map((row) => columns.map((c) => onOneLine(String(c.value(row) ?? '')))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
};

/** `key: value` lines, keys aligned; null and undefined values left out. */
export const fields = (entries: Readonly<Record<string, unknown>>): string => {
  const shown = Object.entries(entries).filter(([, v]) => v !== null && v !== undefined);
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown
    .map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean)}`)
    .join('\n');
};

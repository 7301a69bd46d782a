import { describe, expect, it } from 'vitest';
import { table } from './format.js';

describe('a table at the terminal', () => {
  it('keeps each row on its line and its columns aligned, whatever a cell holds', () => {
    const rows = [
      { id: 'a\nb.md', kind: 'file' },
      { id: 't\tx\u001b[2J', kind: 'file' },
      { id: 'plain.md', kind: 'file' },
    ];
    expect(table([{ header: 'id', value: (r) => r.id }, { header: 'kind', value: (r) => r.kind }], rows)).toBe(
      [
        'ID                 KIND',
        'a\\u000ab.md        file',
        't\\u0009x\\u001b[2J  file',
        'plain.md           file',
      ].join('\n'),
    );
  });
});

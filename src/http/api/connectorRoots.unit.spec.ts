import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../../test/support/ledger.js';
import { connectorRoots, resolveRoot } from './connectorRoots.js';

const base = tempDataDir('ctx-roots-');
mkdirSync(path.join(base, 'repo'));
symlinkSync('/etc', path.join(base, 'out'));
symlinkSync(path.join(base, 'repo'), path.join(base, 'in'));

describe('connector roots', () => {
  it('resolves relative roots inside the base, following links that stay inside', () => {
    expect(resolveRoot(base, 'repo')).toMatch(/\/repo$/);
    expect(resolveRoot(base, 'in')).toMatch(/\/in$/);
    expect(resolveRoot(base, 'not-yet-there')).toMatch(/\/not-yet-there$/);
  });

  it.each(['/etc', '../x', 'repo/../../x', 'out', 'C:\\\\windows', '\\\\server\\share', 'a\0b', ''])(
    'refuses %j',
    (root) => {
      expect(() => resolveRoot(base, root)).toThrow();
    },
  );

  it('checks every root field of local connectors and ignores other kinds', () => {
    expect(() => connectorRoots('filesystem', { roots: ['repo', '/etc'] }, base)).toThrow(/relative/);
    expect(connectorRoots('slack', { root: '/etc' }, base)).toEqual([]);
  });
});

import { mkdirSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../test/support/ledger.js';
import { loadConfig } from '../config.js';
import { connectorRoots } from '../services/connectorRoots.js';
import { readableRoots, readableRootsOf } from './readableRoots.js';

const base = tempDataDir('ctx-roots-');
const root = path.join(base, 'root');
mkdirSync(path.join(root, 'repo'), { recursive: true });
mkdirSync(path.join(base, 'outside'));
symlinkSync('/etc', path.join(root, 'out'));
symlinkSync(path.join(root, 'repo'), path.join(root, 'in'));
const readable = readableRoots([root], base);

describe('readable roots', () => {
  it('resolves paths inside a root, relative or absolute, following links that stay inside', () => {
    expect(readable.resolve('root/repo')).toBe(path.join(root, 'repo'));
    expect(readable.resolve(path.join(root, 'in'))).toBe(path.join(root, 'in'));
    expect(readable.resolve('repo', { base: root })).toBe(path.join(root, 'repo'));
    expect(readable.resolve('root/repo/../repo/not-yet-there')).toBe(path.join(root, 'repo', 'not-yet-there'));
  });

  it.each([
    ['an absolute path outside', '/etc/passwd'],
    ['a parent segment leading out', 'root/../outside'],
    ['the folder above every root', '.'],
    ['a link leading out', 'root/out'],
    ['a path below a link leading out', 'root/out/passwd'],
    ['an empty path', ''],
    ['a path with a NUL byte', 'root/a\0b'],
  ])('refuses %s, naming the setting that allows it', (_name, given) => {
    expect(() => readable.resolve(given, { field: 'repo_path' })).toThrow(expect.objectContaining({
      code: 'VALIDATION_ERROR',
      details: expect.objectContaining({ field: 'repo_path', setting: 'ingest.roots' }) as unknown,
    }));
  });

  it('takes connector roots from the first root and checks every root field of local connectors', () => {
    expect(connectorRoots('filesystem', { root: 'repo' }, readable)).toEqual([path.join(root, 'repo')]);
    expect(() => connectorRoots('filesystem', { roots: ['repo', '/etc'] }, readable)).toThrow(/ingest\.roots/);
    expect(() => connectorRoots('git', { repository: '../outside' }, readable)).toThrow(/ingest\.roots/);
    expect(connectorRoots('slack', { root: '/etc' }, readable)).toEqual([]);
  });

  it('reads ingest.roots, or the older api.connectors_root, or else the working directory', () => {
    const of = (env: NodeJS.ProcessEnv) => readableRootsOf(loadConfig({ env }), base).roots;
    expect(of({ CTX_INGEST__ROOTS: `root, ${path.join(base, 'outside')}` })).toEqual([root, path.join(base, 'outside')]);
    expect(of({ CTX_API__CONNECTORS_ROOT: root })).toEqual([root]);
    expect(of({})).toEqual([base]);
    expect(readableRootsOf(loadConfig({ env: { CTX_INGEST__ROOTS: '/' } }), '/').roots).toEqual(['/']);
  });

  it.each([
    ["the filesystem's root", () => '/'],
    ['the home folder', () => homedir()],
    ['a folder above the home folder', () => path.dirname(homedir())],
  ])('reads nothing by default when ctx runs from %s, and says why', (what, cwdOf) => {
    const previousHome = process.env.HOME;
    process.env.HOME = path.join(root, 'repo');
    try {
      const cwd = cwdOf();
      const fromThere = readableRootsOf(loadConfig({ env: {} }), cwd);
      expect(fromThere.roots).toEqual([]);
      expect(() => fromThere.resolve(path.join(homedir(), '.ssh', 'id_rsa'))).toThrow(
        `(setting ingest.roots): it is unset, and ctx runs from ${cwd}, ${what}, which is not read unless named.`,
      );
      // A project folder below the home folder is read, as before.
      expect(readableRootsOf(loadConfig({ env: {} }), path.join(homedir(), 'project')).roots).toEqual([
        path.join(homedir(), 'project'),
      ]);
    } finally {
      process.env.HOME = previousHome;
    }
    expect(() => loadConfig({ env: { CTX_INGEST__ROOTS: root, CTX_API__CONNECTORS_ROOT: root } })).toThrow(
      /older name of ingest\.roots/,
    );
  });
});

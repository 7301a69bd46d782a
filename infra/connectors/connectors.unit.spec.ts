import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../../src/errors.js';
import { DATA_DIR_MARKER } from '../dataDirMarker.js';
import { scanFilesystem, type FilesystemScanOptions } from './filesystem.js';
import { scanGitRepository, sourceUrlFor, type GitScanOptions } from './git.js';
import { readInsideRoot } from './readInsideRoot.js';
import type { GitFile, ScannedFile, SkippedFile } from './types.js';

const temporaryDirectories: string[] = [];
const makeTemporaryDirectory = (): string => {
  const directory = mkdtempSync(join(tmpdir(), 'ctx-connectors-'));
  temporaryDirectories.push(directory);
  return directory;
};
afterAll(() =>
  temporaryDirectories.forEach((directory) => rmSync(directory, { recursive: true, force: true })),
);

const writeTree = (root: string, files: Record<string, string | Buffer>): void => {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
};

const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
};

const scanned = <T extends ScannedFile>(items: readonly (T | SkippedFile)[]) =>
  items.filter((item): item is T => item.status === 'scanned');

const skipReasons = (items: readonly (ScannedFile | SkippedFile)[]) =>
  Object.fromEntries(
    items
      .filter((item): item is SkippedFile => item.status === 'skipped')
      .map((item) => [item.sourceId, item.reason]),
  );

describe('filesystem connector', () => {
  let root: string;
  let outside: string;
  const scan = (options: Partial<FilesystemScanOptions> = {}) =>
    collect(scanFilesystem({ roots: [root], maxFileBytes: 1000, ...options }));

  beforeAll(() => {
    root = makeTemporaryDirectory();
    outside = makeTemporaryDirectory();
    writeTree(outside, { 'secret.md': 'outside the root' });
    writeTree(root, {
      'README.md': '# Readme\n',
      '.gitignore': '*.log\nbuild/\n',
      'app.log': 'ignored by the root .gitignore',
      'build/out.js': 'console.log(1);',
      'src/a.ts': 'export const a = 1;\n',
      'src/.gitignore': 'secret.txt\n!keep.log\n',
      'src/secret.txt': 'ignored by the nested .gitignore',
      'src/keep.log': 're-included by the nested .gitignore',
      'node_modules/pkg/index.js': 'module.exports = 1;',
      'image.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]),
      'big.txt': 'x'.repeat(5000),
      'docs/guide.md': '# Guide\n',
      'docs/draft.tmp.md': 'not ready',
      '.git/config': '[core]',
    });
    symlinkSync(join(outside, 'secret.md'), join(root, 'escape.md'));
    symlinkSync(outside, join(root, 'escape-dir'));
    symlinkSync(join(root, 'README.md'), join(root, 'alias.md'));
    symlinkSync(join(root, 'missing-target'), join(root, 'dangling.md'));
  });

  it('yields text files with relative source ids, bodies, sizes, times and content types', async () => {
    const files = scanned(await scan({ exclude: ['**/node_modules/**', '**/*.tmp.md'] }));
    expect(files.map((file) => file.sourceId)).toEqual([
      '.gitignore',
      'README.md',
      'alias.md',
      'docs/guide.md',
      'src/.gitignore',
      'src/a.ts',
      'src/keep.log',
    ]);
    const source = files.find((file) => file.sourceId === 'src/a.ts');
    expect(source).toMatchObject({
      root,
      absolutePath: join(root, 'src', 'a.ts'),
      body: 'export const a = 1;\n',
      bytes: 20,
      contentType: 'text/x-typescript',
    });
    expect(new Date(source?.modifiedAt ?? '').toISOString()).toBe(source?.modifiedAt);
    expect(files.find((file) => file.sourceId === 'alias.md')?.body).toBe('# Readme\n');
  });

  it('reports binary, oversized, excluded, gitignored and escaping files as skipped', async () => {
    const reasons = skipReasons(await scan({ exclude: ['**/node_modules/**', '**/*.tmp.md'] }));
    expect(reasons).toEqual({
      'app.log': 'excluded',
      'big.txt': 'too_large',
      'dangling.md': 'unreadable',
      'docs/draft.tmp.md': 'excluded',
      'escape-dir': 'outside_root',
      'escape.md': 'outside_root',
      'image.bin': 'binary',
      'src/secret.txt': 'excluded',
    });
  });

  it('does not enter .git, gitignored or excluded directories', async () => {
    const ids = (await scan()).map((item) => item.sourceId);
    expect(
      ids.some((id) => id.startsWith('.git/') || id.startsWith('build/') || id.startsWith('node_modules/')),
    ).toBe(false);
  });

  it('scans node_modules when the caller replaces the default excludes', async () => {
    const ids = scanned(await scan({ exclude: [] })).map((file) => file.sourceId);
    expect(ids).toContain('node_modules/pkg/index.js');
    expect(ids).toContain('docs/draft.tmp.md');
  });

  it('keeps only files matching the include globs', async () => {
    const items = await scan({ include: ['src/**', '*.md'] });
    expect(scanned(items).map((file) => file.sourceId)).toEqual([
      'README.md',
      'alias.md',
      'src/.gitignore',
      'src/a.ts',
      'src/keep.log',
    ]);
    expect(items.find((item) => item.sourceId === 'docs/guide.md')).toMatchObject({ reason: 'excluded' });
  });

  it('ignores .gitignore files when asked to', async () => {
    const ids = scanned(await scan({ respectGitignore: false })).map((file) => file.sourceId);
    expect(ids).toEqual(expect.arrayContaining(['app.log', 'build/out.js', 'src/secret.txt']));
  });

  it('never reads a data directory or a configuration file of the ledger, whatever the options, and says so', async () => {
    const project = makeTemporaryDirectory();
    writeTree(project, {
      'notes.md': '# Notes\n',
      '.ctx/.gitignore': DATA_DIR_MARKER,
      '.ctx/secrets.key': 'e6ae63458819d4cd9e454d9f007c8c8c',
      '.ctx/pgdata/postgresql.conf': "listen_addresses = ''",
      'sub/.ctx/.gitignore': DATA_DIR_MARKER,
      'sub/.ctx/server.json': '{"secret":"s"}',
      'sub/.gitignore': '# a gitignore of its own\n*.tmp\n',
      'sub/a.md': '# A\n',
      'ctx.toml': '[auth]\njwt_secret = "a secret of at least 32 characters"\n',
    });
    for (const options of [{}, { respectGitignore: false, exclude: [] }]) {
      const items = await collect(scanFilesystem({ roots: [project], ...options }));
      expect(scanned(items).map((file) => file.sourceId)).toEqual(expect.arrayContaining(['notes.md', 'sub/a.md']));
      expect(items.filter((item) => item.sourceId.includes('.ctx'))).toEqual([
        expect.objectContaining({ sourceId: '.ctx', status: 'skipped', reason: 'excluded', detail: 'a Context Ledger data directory (its database and keys)' }),
        expect.objectContaining({ sourceId: 'sub/.ctx', status: 'skipped', reason: 'excluded' }),
      ]);
      expect(items.find((item) => item.sourceId === 'ctx.toml')).toMatchObject({
        status: 'skipped',
        reason: 'excluded',
        detail: 'a Context Ledger configuration file (it may hold keys)',
      });
    }
    // Given as the root itself: the same.
    expect(await collect(scanFilesystem({ roots: [join(project, '.ctx')] }))).toEqual([
      expect.objectContaining({ sourceId: '.', status: 'skipped', reason: 'excluded' }),
    ]);
  });

  it('says of a file whose name is not UTF-8 that its name is the trouble, and reads the rest', async () => {
    const project = makeTemporaryDirectory();
    writeTree(project, { 'menu.md': '# Menu\n' });
    writeFileSync(Buffer.from(`${project}/caf\xe9.md`, 'latin1'), '# Café\n');
    const items = await collect(scanFilesystem({ roots: [project] }));
    expect(scanned(items).map((file) => file.sourceId)).toEqual(['menu.md']);
    expect(items.filter((item) => item.status === 'skipped')).toEqual([
      expect.objectContaining({
        sourceId: 'caf\ufffd.md',
        reason: 'unreadable',
        detail: 'its name is not UTF-8: rename it (convmv converts names) to read it',
      }),
    ]);
  });

  it('passes over environment files and private keys whatever the options, and reads their examples', async () => {
    const project = makeTemporaryDirectory();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    const ed25519 = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    writeTree(project, {
      '.env': 'DATABASE_URL=postgres://app:hunter2@db/app\n',
      'deploy/.env.production': 'STRIPE_KEY=sk_live_0123\n',
      'deploy/.envrc': 'export AWS_SECRET_ACCESS_KEY=abc\n',
      'deploy/.environment.md': '# Our environments\n',
      '.env.example': 'DATABASE_URL=postgres://user:password@localhost/app\n',
      'keys/deploy.pem': rsa,
      'keys/signing': `# the release signing key\n${ed25519}`,
      'secrets.key': 'e6ae63458819d4cd9e454d9f007c8c8c',
      'docs/tls.md': '# TLS\n\nPut the key in `server.key`:\n\n```\n-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n```\n',
    });
    for (const options of [{}, { respectGitignore: false, exclude: [] }]) {
      const items = await collect(scanFilesystem({ roots: [project], ...options }));
      expect(scanned(items).map((file) => file.sourceId)).toEqual(['.env.example', 'deploy/.environment.md', 'docs/tls.md']);
      const details = Object.fromEntries(
        items.filter((item): item is SkippedFile => item.status === 'skipped').map((item) => [item.sourceId, item.detail]),
      );
      expect(details).toEqual({
        '.env': 'an environment file (it may hold secrets)',
        'deploy/.env.production': 'an environment file (it may hold secrets)',
        'deploy/.envrc': 'an environment file (it may hold secrets)',
        'keys/deploy.pem': 'it holds a private key',
        'keys/signing': 'it holds a private key',
        'secrets.key': 'a key file',
      });
    }
  });

  it('reports a file deleted during the scan as vanished and carries on', async () => {
    const directory = makeTemporaryDirectory();
    writeTree(directory, { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' });
    const items: (ScannedFile | SkippedFile)[] = [];
    for await (const item of scanFilesystem({ roots: [directory] })) {
      items.push(item);
      if (item.sourceId === 'a.txt') unlinkSync(join(directory, 'b.txt'));
    }
    expect(items.map((item) => [item.sourceId, item.status === 'skipped' ? item.reason : 'scanned'])).toEqual(
      [
        ['a.txt', 'scanned'],
        ['b.txt', 'vanished'],
        ['c.txt', 'scanned'],
      ],
    );
  });

  it('refuses a file that became a symbolic link to a file outside the root after the walk saw it', async () => {
    const directory = makeTemporaryDirectory();
    writeTree(directory, { 'a.txt': 'a', 'f.md': 'inside' });
    const items: (ScannedFile | SkippedFile)[] = [];
    for await (const item of scanFilesystem({ roots: [directory] })) {
      items.push(item);
      if (item.sourceId === 'a.txt') {
        unlinkSync(join(directory, 'f.md'));
        symlinkSync(join(outside, 'secret.md'), join(directory, 'f.md'));
      }
    }
    expect(items.find((item) => item.sourceId === 'f.md')).toMatchObject({ status: 'skipped', reason: 'outside_root' });
    expect(scanned(items).some((file) => file.body.includes('outside the root'))).toBe(false);
  });

  it('refuses a file whose folder became a symbolic link to a folder outside the root after the walk listed it', async () => {
    const directory = makeTemporaryDirectory();
    writeTree(directory, { 'race/a.txt': 'a', 'race/secret.md': 'inside' });
    const items: (ScannedFile | SkippedFile)[] = [];
    for await (const item of scanFilesystem({ roots: [directory] })) {
      items.push(item);
      if (item.sourceId === 'race/a.txt') {
        renameSync(join(directory, 'race'), join(directory, 'race-before'));
        symlinkSync(outside, join(directory, 'race'));
      }
    }
    expect(items.find((item) => item.sourceId === 'race/secret.md')).toMatchObject({ status: 'skipped', reason: 'outside_root' });
    expect(scanned(items).some((file) => file.body.includes('outside the root'))).toBe(false);
  });

  it('reads no more than the size cap and one byte of a file larger than its size said', async () => {
    // A file in /proc says it holds 0 bytes, as a file that grows after it is measured would.
    const read = await readInsideRoot('/proc/self/status', '/proc', 100);
    expect(read).toEqual({ reason: 'too_large', detail: 'more than 100 bytes' });
  });

  it('refuses a root that does not exist or is not a directory', async () => {
    await expect(collect(scanFilesystem({ roots: [join(root, 'nope')] }))).rejects.toThrow(ValidationError);
    await expect(collect(scanFilesystem({ roots: [join(root, 'README.md')] }))).rejects.toThrow(
      /not a directory/,
    );
  });

  it('scans several roots, each file relative to its own root', async () => {
    const items = scanned(await collect(scanFilesystem({ roots: [join(root, 'docs'), outside] })));
    expect(items.map((file) => [file.root, file.sourceId])).toEqual([
      [join(root, 'docs'), 'draft.tmp.md'],
      [join(root, 'docs'), 'guide.md'],
      [outside, 'secret.md'],
    ]);
  });
});

describe('git connector', () => {
  let repository: string;
  const git = (args: string[], env: Record<string, string> = {}) =>
    execFileSync('git', ['-C', repository, ...args], {
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', ...env },
      encoding: 'utf8',
    });
  const commitAs = (name: string, date: string, message: string) =>
    git(['-c', `user.name=${name}`, '-c', 'user.email=dev@example.com', 'commit', '-q', '-m', message], {
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    });
  const scan = (options: Partial<GitScanOptions> = {}) =>
    collect(scanGitRepository({ repository, maxFileBytes: 1000, ...options }));

  beforeAll(() => {
    repository = makeTemporaryDirectory();
    git(['init', '-q', '-b', 'main']);
    writeTree(repository, {
      'README.md': '# Project\n',
      'src/app.ts': 'export const version = 1;\n',
      'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00]),
      'node_modules/dep/index.js': 'module.exports = {};',
    });
    git(['add', '.']);
    commitAs('Ann Author', '2024-01-01T10:00:00+00:00', 'First');
    writeTree(repository, {
      'src/app.ts': 'export const version = 2;\n',
      'docs/read me.md': 'Spaces in the name.\n',
      'data/big.csv': 'a,b\n'.repeat(500),
      'deploy/ctx.toml': '[auth]\njwt_secret = "a secret of at least 32 characters"\n',
      'deploy/.env': 'API_TOKEN=0123456789\n',
      'deploy/id_rsa': generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }),
    });
    symlinkSync('README.md', join(repository, 'link.md'));
    git(['add', '.']);
    commitAs('Bob Builder', '2024-02-02T12:30:00+02:00', 'Second');
    writeTree(repository, { 'README.md': '# Uncommitted edit\n' });
  });

  it('yields the files at HEAD with the author and time of their last commit', async () => {
    const files = scanned<GitFile>(await scan());
    const byPath = new Map(files.map((file) => [file.sourceId, file]));
    expect([...byPath.keys()]).toEqual(['README.md', 'docs/read me.md', 'src/app.ts']);
    expect(byPath.get('README.md')).toMatchObject({
      body: '# Project\n',
      author: 'Ann Author',
      updatedAt: '2024-01-01T10:00:00+00:00',
      contentType: 'text/markdown',
    });
    expect(byPath.get('src/app.ts')).toMatchObject({
      body: 'export const version = 2;\n',
      author: 'Bob Builder',
      updatedAt: '2024-02-02T12:30:00+02:00',
      bytes: 26,
    });
    const head = git(['rev-parse', 'HEAD']).trim();
    expect(files.every((file) => file.commit === head && file.modifiedAt === file.updatedAt)).toBe(true);
    for (const file of files)
      expect(z.iso.datetime({ offset: true }).safeParse(file.updatedAt).success).toBe(true);
  });

  it('skips binary, oversized and symbolic-link entries and secrets, and does not list excluded directories', async () => {
    const items = await scan({ exclude: [] });
    expect(skipReasons(items)).toEqual({
      'data/big.csv': 'too_large',
      'deploy/.env': 'excluded',
      'deploy/ctx.toml': 'excluded',
      'deploy/id_rsa': 'excluded',
      'link.md': 'excluded',
      'logo.png': 'binary',
    });
    expect(items.find((item) => item.sourceId === 'deploy/ctx.toml')).toMatchObject({
      detail: 'a Context Ledger configuration file (it may hold keys)',
    });
    expect(items.find((item) => item.sourceId === 'deploy/id_rsa')).toMatchObject({ detail: 'it holds a private key' });
    expect((await scan()).some((item) => item.sourceId.startsWith('node_modules/'))).toBe(false);
  });

  it('builds source links from the template, encoding the path', async () => {
    const head = git(['rev-parse', 'HEAD']).trim();
    const files = scanned<GitFile>(
      await scan({ sourceUrlTemplate: 'https://git.example.com/org/repo/blob/{commit}/{path}?ref={branch}' }),
    );
    expect(files.find((file) => file.sourceId === 'docs/read me.md')?.sourceUrl).toBe(
      `https://git.example.com/org/repo/blob/${head}/docs/read%20me.md?ref=main`,
    );
    expect(scanned<GitFile>(await scan()).every((file) => file.sourceUrl === null)).toBe(true);
  });

  it('reads an older revision when given a ref', async () => {
    const files = scanned<GitFile>(await scan({ ref: 'HEAD~1', sourceUrlTemplate: '{branch}/{path}' }));
    expect(files.map((file) => file.sourceId)).toEqual(['README.md', 'src/app.ts']);
    expect(files.find((file) => file.sourceId === 'src/app.ts')).toMatchObject({
      body: 'export const version = 1;\n',
      author: 'Ann Author',
    });
    const first = git(['rev-parse', 'HEAD~1']).trim();
    expect(files[0]?.sourceUrl).toBe(`${first}/README.md`);
  });

  it('stops its git processes when the caller stops early', async () => {
    for await (const item of scanGitRepository({ repository })) {
      expect(item.sourceId).toBe('README.md');
      break;
    }
  });

  it('refuses a directory that is not a repository, or a ref that names no commit', async () => {
    await expect(scan({ repository: makeTemporaryDirectory() })).rejects.toThrow(ValidationError);
    await expect(scan({ ref: 'no-such-branch' })).rejects.toThrow(ValidationError);
    await expect(scan({ repository: join(repository, 'missing') })).rejects.toThrow(/does not exist/);
  });

  it('fills every placeholder of a link template', () => {
    expect(
      sourceUrlFor('{branch}:{commit}:{path}', { commit: 'abc', branch: 'feature/x', path: 'a b/c#d.md' }),
    ).toBe('feature%2Fx:abc:a%20b/c%23d.md');
  });
});

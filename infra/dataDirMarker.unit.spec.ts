import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_DIR_MARKER, isDataDirMarker, markDataDir } from './dataDirMarker.js';

const folderWith = (files: Record<string, string>, folders: string[] = []) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctx-mark-'));
  for (const folder of folders) mkdirSync(path.join(dir, folder));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
};
const gitignoreOf = (dir: string) => {
  try {
    return readFileSync(path.join(dir, '.gitignore'), 'utf8');
  } catch {
    return null;
  }
};

describe('the mark of a data directory', () => {
  it('marks a new data directory, and one holding only what the ledger keeps there', () => {
    for (const dir of [
      folderWith({}),
      folderWith({ 'secrets.key': 'k', 'ctx.lock': '1', 'server.json.7.tmp': '' }, ['pgdata']),
    ]) {
      markDataDir(dir);
      expect(gitignoreOf(dir)).toBe(DATA_DIR_MARKER);
      expect(isDataDirMarker(gitignoreOf(dir)!)).toBe(true);
    }
  });

  it("leaves a folder of the user's given as the data directory unmarked, and a .gitignore of the user's as it is", () => {
    const project = folderWith({ 'README.md': '# Project\n' });
    markDataDir(project);
    expect(gitignoreOf(project)).toBeNull();
    const own = folderWith({ '.gitignore': 'pgdata/\n' }, ['pgdata']);
    markDataDir(own);
    expect(gitignoreOf(own)).toBe('pgdata/\n');
    expect(isDataDirMarker('pgdata/\n')).toBe(false);
  });
});

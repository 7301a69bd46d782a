import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../test/support/ledger.js';
import { lockDataDir } from './dataDirLock.js';

describe('the data directory lock', () => {
  it.each([
    ['empty', ''],
    ['garbled', 'not a pid\n'],
    ['zero', '0'],
  ])('takes over a lock file that names no process (%s)', (_kind, content) => {
    const dir = tempDataDir();
    writeFileSync(path.join(dir, 'ctx.lock'), content);
    const lock = lockDataDir(dir);
    expect(readFileSync(path.join(dir, 'ctx.lock'), 'utf8')).toBe(String(process.pid));
    lock.release();
    expect(existsSync(path.join(dir, 'ctx.lock'))).toBe(false);
  });

  it('refuses a lock held by a running process, naming it', async () => {
    const dir = tempDataDir();
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      writeFileSync(path.join(dir, 'ctx.lock'), String(holder.pid));
      expect(() => lockDataDir(dir)).toThrow(`in use by process ${holder.pid}`);
    } finally {
      holder.kill();
      await new Promise((resolve) => holder.on('exit', resolve));
    }
    // Once its holder is gone, the lock is stale.
    lockDataDir(dir).release();
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Vitest global setup: the run gets a temporary directory of its own, which workers and the
 * processes tests start inherit as TMPDIR, so that every data directory and repository a test
 * makes under `os.tmpdir()` is removed with it when the run ends.
 */
export default function setup(): () => void {
  const root = mkdtempSync(path.join(tmpdir(), 'ctx-test-run-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}

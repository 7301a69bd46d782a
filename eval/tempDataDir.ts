import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const tempDataDirFor = (name: string) => mkdtempSync(path.join(tmpdir(), `ctx-${name}-`));

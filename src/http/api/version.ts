import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The product version, as the nearest package.json states it (from source or from a build). */
const readVersion = (): string => {
  for (
    let dir = path.dirname(fileURLToPath(import.meta.url));
    dir !== path.dirname(dir);
    dir = path.dirname(dir)
  ) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file))
      return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0';
  }
  return '0.0.0';
};

export const PRODUCT_VERSION = readVersion();

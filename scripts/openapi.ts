/**
 * Writes `openapi.json` (the `/api/v1` OpenAPI document generated from the zod schemas), or with
 * `--check` fails when the committed file differs from what the code generates.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/http/api/openApiDocument.js';
import { PRODUCT_VERSION } from '../src/http/api/version.js';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'openapi.json');
const generated = `${JSON.stringify(buildOpenApiDocument(PRODUCT_VERSION), null, 2)}\n`;

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // a missing file differs like any other
  }
  if (committed !== generated) {
    console.error('openapi.json is out of date: run `npx tsx scripts/openapi.ts` and commit the result');
    process.exit(1);
  }
  console.log('openapi.json is up to date');
} else {
  writeFileSync(file, generated);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { tempDataDir } from '../support/ledger.js';

/** The job tools' response schemas, as their contract gives them. */
const CONTRACT = fileURLToPath(new URL('./contracts/indexing-jobs.response-schemas.json', import.meta.url));
const schemas = JSON.parse(readFileSync(CONTRACT, 'utf8')) as Record<string, object>;
const ajv = new Ajv({ strict: false, allErrors: true });
(addFormatsModule as unknown as (a: Ajv) => void)(ajv);

export type ContractName =
  | 'StartIndexingBackgroundResponse'
  | 'GetJobStatusResponse'
  | 'ListBackgroundJobsResponse'
  | 'CancelJobResponse'
  | 'ErrorResponse';

/** Throws with ajv's errors when `value` does not match the contract schema. */
export const assertContract = (name: ContractName, value: unknown): void => {
  const validate = ajv.getSchema(name) ?? (ajv.addSchema(schemas[name]!, name), ajv.getSchema(name)!);
  if (!validate(value)) throw new Error(`${name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
};

/** A repository of `count` small source files, each holding a word of its own. */
export const makeRepo = (count: number, prefix = 'repo-'): string => {
  const root = tempDataDir(prefix);
  for (let i = 0; i < count; i++) {
    const dir = path.join(root, `pkg${i % 10}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, `file${i}.ts`),
      `// module ${i}\nexport const marker${i} = 'uniqueword${i}x';\nexport function add${i}(a: number, b: number) {\n  return a + b + ${i};\n}\n`,
    );
  }
  return root;
};

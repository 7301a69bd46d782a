import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { DEFAULT_EMBEDDING_MODEL, DEFAULT_MODEL_DIR } from '../../src/config.js';

/**
 * Something outside Node a group of tests needs. Without it the group is skipped, saying what to
 * install; `.ci/run` installs everything and sets CTX_TEST_REQUIRE_ALL=1, which turns such a skip
 * into a failure.
 */
export interface Requirement {
  available: boolean;
  /** What is missing and how to get it. */
  missing: string;
}

const requireAll = process.env.CTX_TEST_REQUIRE_ALL === '1';

/** The folder holding the default model: CTX_EMBEDDINGS__MODEL_DIR, else the one `ctx model fetch` fills. */
const findModelDir = (): string | undefined => {
  const dir = process.env.CTX_EMBEDDINGS__MODEL_DIR || DEFAULT_MODEL_DIR;
  return existsSync(path.join(dir, DEFAULT_EMBEDDING_MODEL, 'config.json')) ? dir : undefined;
};

/** Where the real embedding model is, or undefined when this machine has none. */
export const testModelDir = findModelDir();

export const POSTGRES_SERVER: Requirement = {
  available: Boolean(process.env.CTX_TEST_PG_URL),
  missing: 'no PostgreSQL server (set CTX_TEST_PG_URL; .ci/run starts one)',
};

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM: Requirement = {
  available: existsSync(CHROMIUM_PATH),
  missing: `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`,
};

export const EMBEDDING_MODEL: Requirement = {
  available: testModelDir !== undefined,
  missing: `no embedding model in ${process.env.CTX_EMBEDDINGS__MODEL_DIR || DEFAULT_MODEL_DIR} (run \`ctx model fetch\` or set CTX_EMBEDDINGS__MODEL_DIR)`,
};

/** The default model's int8 weights, beside the fp32 ones (`ctx model fetch --weights q8`). */
export const EMBEDDING_MODEL_INT8: Requirement = {
  available:
    testModelDir !== undefined && existsSync(path.join(testModelDir, DEFAULT_EMBEDDING_MODEL, 'onnx', 'model_quantized.onnx')),
  missing: `no int8 weights of the embedding model in ${process.env.CTX_EMBEDDINGS__MODEL_DIR || DEFAULT_MODEL_DIR} (run \`ctx model fetch --weights q8\`)`,
};

const unmet = (title: string, requirement: Requirement) => () => {
  throw new Error(`${title}: ${requirement.missing}, and CTX_TEST_REQUIRE_ALL=1 asks for every test to run`);
};

/** `describe` when the requirement is met; otherwise a skipped group that says what to install. */
export const describeWith = (requirement: Requirement, title: string, body: () => void): void => {
  if (requirement.available) describe(title, body);
  else if (requireAll) describe(title, () => it('has what it needs', unmet(title, requirement)));
  else {
    console.warn(`${title} — skipped: ${requirement.missing}`);
    describe.skip(`${title} (skipped: ${requirement.missing})`, () => it('needs it', () => undefined));
  }
};

/** `it` when the requirement is met; otherwise a skipped test that says what to install. */
export const itWith = (
  requirement: Requirement,
  title: string,
  fn: () => Promise<void> | void,
  timeoutMs?: number,
): void => {
  if (requirement.available) it(title, fn, timeoutMs);
  else if (requireAll) it(title, unmet(title, requirement));
  else {
    console.warn(`${title} — skipped: ${requirement.missing}`);
    it.skip(`${title} (skipped: ${requirement.missing})`, () => undefined);
  }
};

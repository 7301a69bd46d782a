import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_EMBEDDING_MODEL } from '../../src/config.js';
import { startApiServer, type ApiServer } from '../api/apiServer.js';
import { tempDataDir } from '../support/ledger.js';
import { describeWith, EMBEDDING_MODEL, testModelDir } from '../support/requirements.js';
import { makeRepo } from './jobsSupport.js';

/** The model's configuration and tokenizer, with weights that are not a model: the job blocks on them. */
const brokenModelDir = () => {
  const dir = tempDataDir('ctx-broken-model-');
  const model = path.join(dir, DEFAULT_EMBEDDING_MODEL);
  cpSync(path.join(testModelDir!, DEFAULT_EMBEDDING_MODEL), model, { recursive: true });
  const onnx = path.join(model, 'onnx');
  mkdirSync(onnx, { recursive: true });
  for (const name of readdirSync(onnx)) writeFileSync(path.join(onnx, name), 'not a model');
  return dir;
};

describeWith(EMBEDDING_MODEL, 'a job blocked on a broken local model', () => {
  let api: ApiServer;
  let modelDir: string;
  beforeAll(async () => {
    modelDir = brokenModelDir();
    api = await startApiServer({ CTX_EMBEDDINGS__PROVIDER: 'local', CTX_EMBEDDINGS__MODEL_DIR: modelDir });
  });
  afterAll(() => api.close());

  it('says what is wrong without naming where the model or the product lie', async () => {
    const { key } = await api.apiKey(['index:read', 'index:write']);
    const operation = async (name: string, body: unknown) => {
      const reply = await api.call('POST', `/operations/${name}`, { apiKey: key, body });
      expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(300);
      return reply.body;
    };
    const { job_id: jobId } = (await operation('start_indexing_background', { repo_path: makeRepo(2), project_id: 'acme' })) as {
      job_id: string;
    };
    let status: { status?: string; progress_message?: string } = {};
    while (status.status !== 'blocked') {
      status = await operation('get_job_status', { job_id: jobId });
      if (status.status !== 'blocked') await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status.progress_message).toMatch(/^Blocked: cannot load the weights of model Xenova\/bge-small-en-v1\.5/);
    expect(status.progress_message).not.toContain(modelDir);
    expect(status.progress_message).not.toMatch(/(^|[\s'"(])\/[\w.-]+\//);
    await operation('cancel_job', { job_id: jobId });
  }, 300_000);
});

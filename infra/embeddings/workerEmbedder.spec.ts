import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UnavailableError, ValidationError } from '../../src/errors.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { describeWith, EMBEDDING_MODEL, testModelDir } from '../../test/support/requirements.js';
import { createLocalEmbedder } from './localEmbedder.js';
import { createWorkerEmbedder } from './workerEmbedder.js';

const passages = Array.from({ length: 48 }, (_, i) => `passage ${i} on event stores, projections and replays. `.repeat(12));
/** Nice values of this process's threads, from Linux's /proc (the 19th field of each task's stat). */
const threadNiceness = (): number[] =>
  readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describeWith(EMBEDDING_MODEL, 'the local model in worker threads', () => {
  let worker: Embedder;
  let inProcess: Embedder;
  beforeAll(async () => {
    worker = await createWorkerEmbedder({ modelDir: testModelDir! });
    inProcess = await createLocalEmbedder({ modelDir: testModelDir! });
  }, 120_000);
  afterAll(async () => {
    await worker?.close();
    await inProcess?.close();
  });

  it('gives the vectors the model gives in-process', async () => {
    expect(worker.model).toBe(inProcess.model);
    const texts = [passages[0]!, 'how is a projection rebuilt'];
    const [a, b] = [await worker.embed(texts, 'document'), await inProcess.embed(texts, 'document')];
    a.forEach((vector, i) => expect(cosine(vector, b[i]!)).toBeGreaterThan(0.999));
    const [query] = await worker.embed(['how is a projection rebuilt'], 'query');
    expect(cosine(query!, (await inProcess.embed(['how is a projection rebuilt'], 'query'))[0]!)).toBeGreaterThan(0.999);
  }, 120_000);

  it('keeps the event loop free and answers a query while passages are being embedded', async () => {
    await worker.embed(['warm the query thread'], 'query');
    const order: string[] = [];
    let turns = 0;
    const documents = worker.embed(passages, 'document').then(() => order.push('documents'));
    // Timers keep firing while the passages are embedded: nothing holds the loop.
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (++turns < 5) return;
        clearInterval(timer);
        resolve();
      }, 1);
    });
    const query = worker.embed(['which store keeps the events'], 'query').then(() => order.push('query'));
    await Promise.all([documents, query]);
    expect(order).toEqual(['query', 'documents']);
  }, 120_000);

  it('embeds passages on threads niced below the ones answering requests and queries', async () => {
    await worker.embed([passages[1]!], 'document');
    const niceness = threadNiceness();
    expect(niceness.filter((n) => n === 10).length).toBeGreaterThan(0);
    expect(niceness[0]).toBe(0);
  }, 120_000);

  it('answers no call once closed, rather than starting its threads again', async () => {
    const closing = await createWorkerEmbedder({ modelDir: testModelDir! });
    await closing.close();
    await expect(closing.embed(['after close'], 'document')).rejects.toBeInstanceOf(UnavailableError);
  }, 120_000);

  it('reports a model folder that is not there as bad configuration', async () => {
    await expect(createWorkerEmbedder({ modelDir: testModelDir!, model: 'nobody/no-such-model' })).rejects.toBeInstanceOf(ValidationError);
  });
});

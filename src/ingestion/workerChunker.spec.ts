import { afterAll, describe, expect, it } from 'vitest';
import { treeSitterChunker } from '../../infra/chunking/chunker.js';
import { createWorkerChunker } from './workerChunker.js';

/** A TypeScript file of a few thousand functions: parsing it takes a while. */
const largeFile = Array.from(
  { length: 3000 },
  (_, i) => `export function handler${i}(input: { id: number; name: string }): string {\n  return input.name + ${i} + input.id;\n}\n`,
).join('\n');
const input = (body: string) => ({ documentId: '0d6c1a34-98a6-4b0e-9a43-7f1b40ad2f11', path: 'src/handlers.ts', contentType: 'text/x-typescript', body });

describe('the chunker in a worker thread', () => {
  const chunker = createWorkerChunker();
  afterAll(() => chunker.close());

  it('gives the chunks the chunker gives in-process', async () => {
    const small = input(largeFile.slice(0, 2000));
    expect(await chunker.chunk(small)).toEqual(await treeSitterChunker.chunk(small));
  });

  it('leaves the event loop free while a large file is parsed', async () => {
    const order: string[] = [];
    const chunked = chunker.chunk(input(largeFile)).then((chunks) => order.push(`chunked ${chunks.length > 100}`));
    await new Promise((resolve) => setImmediate(resolve));
    order.push('turn');
    await chunked;
    expect(order).toEqual(['turn', 'chunked true']);
  });
});

import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The dimension of the stand-in's vectors (`embeddings.dimensions` of a ledger that uses it). */
export const SLOW_EMBEDDER_DIMENSIONS = 8;

/**
 * An OpenAI-style embedding server on loopback that takes `delayMs` over each call of more than one
 * text, as a model on a CPU does (a search's single query is answered at once). Each text's vector
 * is taken from its hash; every text it was sent is kept. While held, such calls wait for the release.
 */
export const startSlowEmbedder = async (delayMs: number) => {
  const received: string[] = [];
  let held: { released: Promise<void>; release: () => void } | undefined;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { input } = JSON.parse(body) as { input: string[] | string };
      const texts = Array.isArray(input) ? input : [input];
      received.push(...texts);
      const vectors = texts.map((text) =>
        [...createHash('sha256').update(text).digest().subarray(0, SLOW_EMBEDDER_DIMENSIONS)].map((b) => b / 255 + 0.01),
      );
      const answer = () =>
        setTimeout(() => {
          response.setHeader('content-type', 'application/json');
          response.end(JSON.stringify({ data: vectors.map((embedding, index) => ({ index, embedding })) }));
        }, texts.length > 1 ? delayMs : 0);
      if (texts.length > 1 && held) void held.released.then(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Every text sent so far, queries included. */
    received: (): readonly string[] => received,
    /** Calls of more than one text wait from now until `release`. */
    hold: () => {
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      held = { released, release };
    },
    release: () => {
      held?.release();
      held = undefined;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

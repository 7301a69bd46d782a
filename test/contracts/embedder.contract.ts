import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError, ValidationError } from '../../src/errors.js';
import type { Embedder } from '../../src/ports/embedder.js';

export interface EmbedderFixture {
  embedder: Embedder;
  /** How many requests reached the backend so far, when the fixture can see them. */
  backendCalls?: () => number;
  /** The same adapter with its backend down, when it has one to lose. */
  unreachable?: () => Promise<Embedder>;
  /** The same adapter with a backend that refuses the request as bad input, when it has one. */
  refusing?: () => Promise<Embedder>;
  cleanup(): Promise<void>;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

const TEXTS = ['The quick brown fox.', 'Event sourcing keeps every change.', 'How is a projection rebuilt?'];

/** The embedder contract (see src/ports/embedder.ts): every adapter of the `Embedder` port must pass it. */
export const describeEmbedderContract = (name: string, factory: () => Promise<EmbedderFixture>): void => {
  describe(`Embedder contract: ${name}`, () => {
    let fixture: EmbedderFixture;
    beforeAll(async () => {
      fixture = await factory();
    }, 120_000);
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('returns one vector per text, in input order, each of its dimensions', async () => {
      const { embedder } = fixture;
      expect(embedder.model).toEqual(expect.any(String));
      const vectors = await embedder.embed(TEXTS, 'document');
      expect(vectors).toHaveLength(TEXTS.length);
      for (const vector of vectors) expect(vector).toHaveLength(embedder.dimensions);
      const reversed = await embedder.embed([...TEXTS].reverse(), 'document');
      reversed.reverse().forEach((vector, i) => expect(dot(vector, vectors[i]!)).toBeGreaterThan(0.99));
      const alone = await embedder.embed([TEXTS[1]!], 'document');
      expect(dot(alone[0]!, vectors[1]!)).toBeGreaterThan(0.99);
    }, 60_000);

    it('returns L2-normalised vectors, so cosine similarity is their dot product', async () => {
      for (const kind of ['query', 'document'] as const)
        for (const vector of await fixture.embedder.embed(TEXTS, kind)) expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 4);
    }, 60_000);

    it('gives the same vector for the same text and kind', async () => {
      const [first] = await fixture.embedder.embed([TEXTS[2]!], 'query');
      const [again] = await fixture.embedder.embed([TEXTS[2]!], 'query');
      expect(dot(first!, again!)).toBeGreaterThan(0.99);
    }, 60_000);

    it('resolves embed([]) to [] without touching the backend', async () => {
      const before = fixture.backendCalls?.();
      expect(await fixture.embedder.embed([], 'document')).toEqual([]);
      expect(fixture.backendCalls?.()).toBe(before);
    });

    it('throws UnavailableError when its backend cannot be reached, ValidationError when it refuses the input', async (context) => {
      if (!fixture.unreachable && !fixture.refusing) return context.skip('this adapter has no backend to lose');
      if (fixture.unreachable) {
        const down = await fixture.unreachable();
        await expect(down.embed(['anything'], 'document')).rejects.toBeInstanceOf(UnavailableError);
      }
      if (fixture.refusing) {
        const refusing = await fixture.refusing();
        await expect(refusing.embed(['anything'], 'document')).rejects.toBeInstanceOf(ValidationError);
      }
    });
  });
};

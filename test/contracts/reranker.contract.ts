import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.js';
import type { Reranker } from '../../src/ports/reranker.js';

export interface RerankerFixture {
  reranker: Reranker;
  /** How many requests reached the backend so far, when the fixture can see them. */
  backendCalls?: () => number;
  /** The same adapter with its backend down, or its model missing. */
  unavailable: () => Reranker;
  cleanup(): Promise<void>;
}

export const QUERY = 'what to bake';
/** From the most relevant to the least, as every fixture's cross-encoder judges them. */
export const PASSAGES = ['Bake the bread at two hundred degrees.', 'Clean the kitchen oven on Sundays.', 'Change the engine oil of the car.'];

/** The reranker contract (see src/ports/reranker.ts): every adapter of the `Reranker` port must pass it. */
export const describeRerankerContract = (name: string, factory: () => Promise<RerankerFixture>): void => {
  describe(`Reranker contract: ${name}`, () => {
    let fixture: RerankerFixture;
    beforeAll(async () => {
      fixture = await factory();
    }, 120_000);
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('returns one score per passage, in input order, higher for the more relevant', async () => {
      const { reranker } = fixture;
      expect(reranker.model).toEqual(expect.any(String));
      const scores = await reranker.score(QUERY, PASSAGES);
      expect(scores).toHaveLength(PASSAGES.length);
      expect(scores[0]).toBeGreaterThan(scores[1]!);
      expect(scores[1]).toBeGreaterThan(scores[2]!);
      expect(await reranker.score(QUERY, [...PASSAGES].reverse())).toEqual([...scores].reverse());
      expect(await reranker.score(QUERY, [PASSAGES[1]!])).toEqual([scores[1]]);
    }, 60_000);

    it('resolves score(query, []) to [] without touching the backend', async () => {
      const before = fixture.backendCalls?.();
      expect(await fixture.reranker.score(QUERY, [])).toEqual([]);
      expect(fixture.backendCalls?.()).toBe(before);
    });

    it('throws UnavailableError when its backend or model cannot be used', async () => {
      await expect(fixture.unavailable().score(QUERY, PASSAGES)).rejects.toBeInstanceOf(UnavailableError);
    }, 60_000);
  });
};

import { z } from 'zod';
import type { DocumentView } from '../../src/domain/documentView.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { ReadModels } from '../../src/ports/projections.js';

/** Documents read per project when building its vocabulary. */
const MAX_DOCUMENTS = 5000;
const CACHE_MS = 30_000;
const STOPWORDS = new Set([
  'the',
  'and',
  'for',
  'with',
  'from',
  'this',
  'that',
  'into',
  'index',
  'src',
  'lib',
  'test',
  'spec',
  'main',
]);

/** Candidate phrases of a project, with how often each occurs. */
type Vocabulary = Map<string, number>;

const wordsOf = (text: string) =>
  text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOPWORDS.has(w) && !/^\d+$/.test(w));

const add = (vocabulary: Vocabulary, phrase: string) =>
  vocabulary.set(phrase, (vocabulary.get(phrase) ?? 0) + 1);

const buildVocabulary = (documents: readonly DocumentView[]): Vocabulary => {
  const vocabulary: Vocabulary = new Map();
  for (const doc of documents) {
    const name = doc.sourceId.split('/').pop() ?? doc.sourceId;
    if (doc.title) add(vocabulary, doc.title.toLowerCase());
    add(vocabulary, name.toLowerCase());
    for (const word of wordsOf(`${doc.title ?? ''} ${name}`)) add(vocabulary, word);
    for (const chunk of doc.chunks) {
      if (!chunk.symbol) continue;
      add(vocabulary, chunk.symbol);
      const words = wordsOf(chunk.symbol);
      for (const word of words) add(vocabulary, word);
      if (words.length > 1) add(vocabulary, words.join(' '));
    }
  }
  return vocabulary;
};

/** Suggestions from the project's indexed titles, code symbols and frequent terms. */
export const createSearchSuggestions = (readModels: ReadModels, now: () => number = Date.now) => {
  const cache = new Map<string, { at: number; vocabulary: Vocabulary }>();
  const vocabularyOf = async (project: string) => {
    const cached = cache.get(project);
    if (cached && now() - cached.at < CACHE_MS) return cached.vocabulary;
    const { items } = await readModels.find<DocumentView>('documents', {
      where: { project },
      limit: MAX_DOCUMENTS,
    });
    const vocabulary = buildVocabulary(items);
    cache.set(project, { at: now(), vocabulary });
    return vocabulary;
  };
  return async (project: string, partial: string, limit: number): Promise<string[]> => {
    const vocabulary = await vocabularyOf(project);
    const q = partial.trim().toLowerCase();
    const scored: { phrase: string; score: number }[] = [];
    for (const [phrase, count] of vocabulary) {
      const lower = phrase.toLowerCase();
      if (lower === q) continue;
      const rank = !q
        ? 1
        : lower.startsWith(q)
          ? 3
          : new RegExp(`(^|[^a-z0-9])${q.replace(/[^a-z0-9]/g, '\\$&')}`).test(lower)
            ? 2
            : 0;
      if (rank > 0) scored.push({ phrase, score: rank * 1000 + count });
    }
    scored.sort(
      (a, b) => b.score - a.score || a.phrase.length - b.phrase.length || a.phrase.localeCompare(b.phrase),
    );
    return scored.slice(0, limit).map((s) => s.phrase);
  };
};

export const searchSuggestionsSurfaces = {
  name: 'search.suggestions',
  tool: false,
  toolset: 'search',
  writes: false,
  scope: 'search:read',
  input: z.object({
    q: z.string().max(200).default(''),
    limit: z.coerce.number().int().min(1).max(50).default(5),
  }),
  output: z.object({ suggestions: z.array(z.string()) }),
  rest: {
    method: 'GET',
    path: '/search/suggestions',
    summary: 'Query suggestions from indexed titles, symbols and frequent terms',
    query: ['q', 'limit'],
    rateClass: 'search',
  },
} as const satisfies RouteSurfaces;

export const searchSuggestionsOperation = (readModels: ReadModels) => {
  const suggestions = createSearchSuggestions(readModels);
  return defineOperation({
    ...searchSuggestionsSurfaces,
    title: 'Query suggestions',
    description: "Completions of a partial query from the project's indexed titles, code symbols and frequent terms.",
    run: async ({ q, limit }, { project }) => ({ suggestions: await suggestions(project, q, limit) }),
  });
};

export interface ContextSearchOptions {
  mode?: 'keyword' | 'semantic' | 'hybrid';
  limit?: number;
  source?: string;
}

/**
 * The read-only context queries scripts may call as `ctx.search`, `ctx.get` and `ctx.sources`.
 * Answers are plain JSON (the tool API's shapes); an unknown id or a disabled mode rejects with the
 * query's own AppError.
 */
export interface ContextTools {
  search(query: string, options: ContextSearchOptions): Promise<unknown>;
  get(id: string): Promise<unknown>;
  sources(): Promise<unknown>;
}

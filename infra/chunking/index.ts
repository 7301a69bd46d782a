export { chunkDocument, type ChunkDocumentInput, type ChunkOptions } from './chunkDocument.js';
export { detectContentType, languageOf, type CodeLanguage } from './contentTypes.js';
export { estimateTokens, DEFAULT_BUDGET, type ChunkBudget } from './tokenBudget.js';

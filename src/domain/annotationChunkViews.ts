import type { StoredAnnotationFields } from './annotations.js';

/**
 * One row per chunk that has been annotated or is the source of a relation; chunks never touched
 * have no row and export with empty fields.
 */
export interface AnnotationChunkRow extends StoredAnnotationFields {
  sessionId: string;
  chunkId: string;
  annotated: boolean;
  relations: Record<string, string[]>;
  updatedAt: string;
}

export const ANNOTATION_CHUNKS = 'annotation_chunks';

/** Every chunk of a session as `[chunkId, position]`, in position order: the skeleton of an export. */
export interface AnnotationChunkList {
  sessionId: string;
  chunks: [string, number][];
}

export const ANNOTATION_CHUNK_LISTS = 'annotation_chunk_lists';

import { z } from 'zod';

/** A text sealed with AES-256-GCM under one data key: readable only while that key exists. */
export const SealedTextSchema = z.object({
  keyId: z.uuid(),
  iv: z.string().min(1),
  ciphertext: z.string(),
  tag: z.string().min(1),
});
export type SealedText = z.infer<typeof SealedTextSchema>;

/**
 * Free text as events and read models hold it: sealed, or a plain string written before free text
 * was sealed (or an empty one, which says nothing). Plain strings stay readable and cannot be
 * shredded: their bytes are in the event log itself.
 */
export const ProtectedTextSchema = z.union([z.string(), SealedTextSchema]);
export type ProtectedText = z.infer<typeof ProtectedTextSchema>;

export const isSealedText = (value: unknown): value is SealedText =>
  typeof value === 'object' && value !== null && typeof (value as Partial<SealedText>).keyId === 'string';

/** Seals free text with the writer's data key. */
export interface Sealer {
  seal: (text: string) => SealedText;
}

/** Opens free text: the plain text, or null when the key that sealed it was forgotten. */
export interface Opener {
  open: (value: ProtectedText) => string | null;
}

import { z } from 'zod';

/**
 * A subject's data keys were deleted: every note and summary they sealed is unreadable from now on.
 * Who asked is in the metadata; what was forgotten is named, never shown.
 */
export const SubjectForgottenSchema = z.object({
  type: z.literal('SubjectForgotten'),
  schemaVersion: z.literal(1),
  data: z.object({
    subject: z.string().min(1),
    /** The tenant the subject was forgotten in; null: in every tenant. */
    tenant: z.string().nullable(),
    reason: z.string().nullable(),
    keyIds: z.array(z.uuid()),
    /** Notes and summaries written before free text was sealed: still readable, see the README. */
    plaintextNotes: z.number().int().nonnegative(),
  }),
});
export type SubjectForgotten = z.infer<typeof SubjectForgottenSchema>;

export const ProtectionEventSchemas = [SubjectForgottenSchema] as const;

import { z } from 'zod';
import { commandContext } from '../../src/engine/commands.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import { parseInput } from '../../src/validation.js';
import { forgetDocument, type ForgetDocumentDeps } from './forgetDocument.js';
import { forgetSubject } from './forgetSubject.js';
import type { Keyring } from '../../src/ports/keyring.js';

export const ForgetInputSchema = z
  .object({
    document_id: z
      .uuid()
      .optional()
      .describe('Forget the content (body and chunks) of every version of this document'),
    subject: z
      .string()
      .min(1)
      .optional()
      .describe('Forget the annotation notes and summaries this subject (their author) wrote'),
    tenant: z
      .string()
      .min(1)
      .optional()
      .describe("With subject: only in this tenant (default: every tenant); a tenant's admin forgets in its own"),
    reason: z.string().min(1).max(1_000).optional().describe('Why; kept in the audit event'),
  })
  .refine((input) => (input.document_id === undefined) !== (input.subject === undefined), {
    message: 'give exactly one of document_id or subject',
  });

export const ForgetOutputSchema = z.object({
  forgotten: z.enum(['document', 'subject']),
  document_id: z.string().optional(),
  newly_forgotten: z.boolean().optional().describe('False when the document was already forgotten'),
  contents_erased: z.number().int().optional().describe('Texts (body and chunks) erased'),
  contents_kept: z.number().int().optional().describe('Texts kept because another document still holds them'),
  subject: z.string().optional(),
  tenant: z
    .string()
    .nullable()
    .optional()
    .describe('The tenant the subject was forgotten in; null: every tenant'),
  keys_forgotten: z.number().int().optional().describe('Data keys deleted'),
  plaintext_notes: z
    .number()
    .int()
    .optional()
    .describe('Notes written before notes were sealed: they stay readable in the event log'),
  position: z.string().nullable().describe('Position of the audit event; null when nothing new was recorded'),
});
export type ForgetOutput = z.infer<typeof ForgetOutputSchema>;

export interface ForgetDeps extends ForgetDocumentDeps {
  keyring: Keyring;
}

export const forgetSurfaces = {
  name: 'ledger.forget',
  toolset: 'admin',
  scope: 'admin',
  writes: true,
  // Callers of a deployment without authentication (REST, MCP over HTTP) forget only in the default tenant.
  withinTenant: true,
  input: ForgetInputSchema,
  output: ForgetOutputSchema,
  rest: {
    method: 'POST',
    path: '/forget',
    summary: "Forget a document's content or a subject's annotation notes, keeping the history",
  },
  cli: [
    {
      command: ['forget', 'document'],
      description: "erase a document's body and chunks (every version), its index entries and cached embeddings",
      arguments: [{ name: 'id', field: 'document_id', description: 'the document id' }],
      options: [{ flags: '--reason <reason>', field: 'reason', description: 'why; kept in the audit event' }],
      catchUp: true,
      print: {
        fields: {
          forgotten: '{forgotten}',
          document_id: '{document_id}',
          newly_forgotten: '{newly_forgotten}',
          contents_erased: '{contents_erased}',
          contents_kept: '{contents_kept}',
          position: '{position}',
        },
      },
    },
    {
      command: ['forget', 'subject'],
      description: 'make every annotation note and summary this subject wrote unreadable, by deleting their keys',
      arguments: [{ name: 'subject', field: 'subject', description: 'the author, as events name them (actor subject)' }],
      options: [
        { flags: '--tenant <tenant>', field: 'tenant', description: 'only in this tenant (default: every tenant)' },
        { flags: '--reason <reason>', field: 'reason', description: 'why; kept in the audit event' },
      ],
      catchUp: true,
      print: {
        fields: {
          forgotten: '{forgotten}',
          subject: '{subject}',
          tenant: '{tenant}',
          keys_forgotten: '{keys_forgotten}',
          plaintext_notes: '{plaintext_notes}',
          position: '{position}',
        },
      },
    },
  ],
} as const satisfies RouteSurfaces;

export const forgetOperation = (deps: ForgetDeps) =>
  defineOperation({
    ...forgetSurfaces,
    title: 'Forget content',
    description:
      "Forgets a document's content (body, chunks, their index entries and embeddings) or everything a subject " +
      'wrote in annotation notes and summaries, without rewriting history: the events stay, the content becomes ' +
      'unreadable everywhere, and an audit event records who asked and why.',
    run: async (rawInput, { actor, correlationId, project }): Promise<ForgetOutput> => {
      const input = parseInput(ForgetInputSchema, rawInput);
      const context = commandContext(actor, { correlationId, project });
      const reason = input.reason ?? null;
      if (input.document_id !== undefined) {
        const done = await forgetDocument(deps, { documentId: input.document_id, reason }, context);
        return {
          forgotten: 'document',
          document_id: done.documentId,
          newly_forgotten: done.newlyForgotten,
          contents_erased: done.contentsErased,
          contents_kept: done.contentsKept,
          position: done.position,
        };
      }
      // A tenant's admin forgets within the tenant; a caller without a tenant (the operator) everywhere.
      const done = await forgetSubject(
        deps,
        { subject: input.subject!, tenant: actor.tenant ?? input.tenant ?? null, reason },
        context,
      );
      return {
        forgotten: 'subject',
        subject: done.subject,
        tenant: done.tenant,
        keys_forgotten: done.keysForgotten,
        plaintext_notes: done.plaintextNotes,
        position: done.position,
      };
    },
  });

import { z } from 'zod';
import type { AuthEvent } from '../../src/domain/auth.js';
import { streamId } from '../../src/domain/events.js';
import { commandContext } from '../../src/engine/commands.js';
import { NotFoundError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { assertWithinTenant, type CredentialCommandDeps } from './createApiKey.js';
import { revokeTokenFamily } from './rotateRefreshToken.js';

export const RevokeTokensInputSchema = z
  .object({
    family_id: z
      .uuid()
      .describe('The family `tokens.issue` answered (also the part of the refresh token after `rt.`)'),
    reason: z.string().min(1).max(1_000).optional().describe('Why; kept in the audit event'),
  })
  .strict();

export const revokeTokensSurfaces = {
  name: 'tokens.revoke',
  cli: {
    command: ['tokens', 'revoke'],
    description: 'revoke a token family: its access and refresh tokens, and the tokens they issued',
    arguments: [{ name: 'familyId', field: 'family_id', description: 'the family printed by `ctx tokens`' }],
    options: [{ flags: '--reason <reason>', field: 'reason', description: 'why; kept in the audit event' }],
    print: { line: 'revoked {family_id}' },
  },
} as const satisfies OperationSurfaces;

/** `tokens.revoke`: the family's tokens are refused once it answers; revoking it again changes nothing. */
export const revokeTokensOperation = ({ store, waitForProjections }: CredentialCommandDeps) =>
  defineOperation({
    ...revokeTokensSurfaces,
    title: 'Revoke tokens',
    description:
      'Revokes a token family: its access tokens, its refresh token and every token issued with them are refused from then on.',
    toolset: 'admin',
    scope: 'admin',
    writes: true,
    input: RevokeTokensInputSchema,
    output: z.object({ family_id: z.string(), revoked: z.literal(true) }),
    run: async (input, context) => {
      const [issued] = await store.readStream(streamId('refresh', input.family_id), { maxCount: 1 });
      if (!issued) throw new NotFoundError(`No token family ${input.family_id}`);
      const { tenant } = issued.data as Extract<AuthEvent, { type: 'RefreshTokenIssued' }>['data'];
      assertWithinTenant(context, tenant);
      await revokeTokenFamily(
        store,
        { familyId: input.family_id, reason: input.reason ?? `revoked by ${context.actor.subject}` },
        commandContext(context.actor, { correlationId: context.correlationId, project: tenant }),
      );
      await waitForProjections(await store.headPosition());
      return { family_id: input.family_id, revoked: true as const };
    },
  });

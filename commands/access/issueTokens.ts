import { z } from 'zod';
import { AuthorizationError, ScopeSchema, type Credential, type Scope } from '../../src/domain/auth.js';
import { commandContext, type CommandContext } from '../../src/engine/commands.js';
import { defineOperation, isOperator, OPERATOR_NEEDED, type OperationSurfaces } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { assertWithinTenant } from './createApiKey.js';

export const IssueTokensInputSchema = z
  .object({
    subject: z
      .string()
      .min(1)
      .max(500)
      .describe("Who the tokens are for (the token's sub, the actor of what it does); only the operator names another than itself"),
    scopes: z.array(ScopeSchema).min(1).describe('What the access token allows'),
    tenant: z.string().min(1).max(200).describe('The tenant (project) the tokens work in'),
  })
  .strict();

export const TokenPairSchema = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  expires_in: z.number().int().describe('Seconds the access token lives'),
  token_type: z.literal('Bearer'),
  family_id: z.string().describe('The tokens\' family, for `tokens.revoke`'),
});

export type IssueTokens = (
  input: { subject: string; tenant: string; scopes: Scope[]; issuedWith?: Credential },
  context: CommandContext,
) => Promise<z.infer<typeof TokenPairSchema>>;

export const issueTokensSurfaces = {
  name: 'tokens.issue',
  cli: {
    command: ['tokens'],
    description: 'issue an access token and a refresh token (needs auth.jwt_secret)',
    options: [
      // Not marked required here: `ctx tokens revoke` is a verb below this one.
      { flags: '--subject <subject>', field: 'subject', description: 'who the tokens are for (required)' },
      { flags: '--scopes <scopes>', field: 'scopes', description: 'comma-separated scopes (required)', parse: 'scopes' },
      { flags: '--tenant <tenant>', field: 'tenant', description: 'the tenant (project)', default: DEFAULT_PROJECT },
    ],
    print: {
      fields: {
        'access token': '{access_token}',
        'refresh token': '{refresh_token}',
        'expires in': '{expires_in} s',
        family: '{family_id}',
      },
    },
  },
} as const satisfies OperationSurfaces;

/**
 * `tokens.issue`: an access token and the first refresh token of a new family, where the refresh
 * tokens live (the server that will exchange them). Signing needs `auth.jwt_secret`.
 */
export const issueTokensOperation = (issue: IssueTokens) =>
  defineOperation({
    ...issueTokensSurfaces,
    title: 'Issue tokens',
    description:
      'Issues an access token and a refresh token for a subject, with scopes, in a tenant. A tenant\'s admin issues them for itself; ' +
      'revoking the key (or the tokens) it called with revokes them too.',
    toolset: 'admin',
    scope: 'admin',
    writes: true,
    input: IssueTokensInputSchema,
    output: TokenPairSchema,
    run: (input, context) => {
      const { actor, correlationId, project, credential } = context;
      assertWithinTenant(context, input.tenant);
      // Tokens act as their subject: only the operator speaks for someone else.
      if (input.subject !== actor.subject && !isOperator(context)) {
        throw new AuthorizationError(
          undefined,
          `Tokens for a subject other than your own ('${actor.subject}') need ${OPERATOR_NEEDED}`,
        );
      }
      return issue({ ...input, ...(credential ? { issuedWith: credential } : {}) }, commandContext(actor, { correlationId, project }));
    },
  });

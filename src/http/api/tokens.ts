import { issueTokenPair } from '../../../commands/rotateRefreshToken.js';
import type { Config } from '../../config.js';
import type { Scope } from '../../domain/auth.js';
import type { CommandContext } from '../../engine/commands.js';
import type { EventStore } from '../../ports/eventStore.js';
import type { JwtCodec } from './jwtCodec.js';

/** A new access token and the first refresh token of a new family, signed with the deployment's key. */
export const issueTokens = (
  { store, jwt, config }: { store: EventStore; jwt: JwtCodec | null; config: Config },
  input: { subject: string; tenant: string; scopes: Scope[] },
  context: CommandContext,
) => issueTokenPair({ store, signer: jwt, accessTtlS: config.auth.accessTtlS, refreshTtlS: config.auth.refreshTtlS }, input, context);

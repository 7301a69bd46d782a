import type { AuthEvent } from '../../src/domain/auth.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { TOKEN_FAMILIES, type TokenFamilyRow } from '../../src/domain/tokenFamilyView.js';
import type { DocumentProjection } from '../../src/ports/projections.js';

/** Refresh token families, whether revoked, and what issued them: authentication follows the chain. */
export const tokenFamiliesProjection: DocumentProjection<TokenFamilyRow> = {
  name: TOKEN_FAMILIES,
  version: 1,
  eventTypes: ['RefreshTokenIssued', 'RefreshTokenFamilyRevoked'],
  documentIds: (event) => [(event.data as { familyId: string }).familyId],
  evolve: (row, stored) => {
    const event = stored as StoredEvent<AuthEvent>;
    if (event.type === 'RefreshTokenIssued') {
      const { familyId, subject, tenant, issuedWithKey, issuedWithFamily } = event.data;
      return {
        familyId,
        subject,
        tenant,
        issuedWithKey: issuedWithKey ?? null,
        issuedWithFamily: issuedWithFamily ?? null,
        revoked: false,
      };
    }
    if (event.type === 'RefreshTokenFamilyRevoked' && row) return { ...row, revoked: true };
    return row;
  },
};

/** A refresh token family as authentication looks it up: by its id, carried in its access tokens. */
export interface TokenFamilyRow {
  familyId: string;
  subject: string;
  tenant: string;
  /** The API key whose caller issued the family, if one did. */
  issuedWithKey: string | null;
  /** The family whose access token issued this one, if one did. */
  issuedWithFamily: string | null;
  revoked: boolean;
}

export const TOKEN_FAMILIES = 'token_families';

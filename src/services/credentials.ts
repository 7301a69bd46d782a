import type { ReadModels } from '../ports/projections.js';
import { API_KEYS, type ApiKeyRow } from '../domain/apiKeyView.js';
import type { Credential } from '../domain/auth.js';
import { TOKEN_FAMILIES, type TokenFamilyRow } from '../domain/tokenFamilyView.js';

/** Tokens issue tokens: a chain longer than this is refused rather than followed. */
const MAX_CHAIN = 16;

/** What issued a token family: an API key, another family's access token, or nothing. */
const issuerOf = (family: TokenFamilyRow): Credential | null =>
  family.issuedWithKey
    ? { apiKey: family.issuedWithKey }
    : family.issuedWithFamily
      ? { tokenFamily: family.issuedWithFamily }
      : null;

/** The chain's walk from `credential`, which is `depth` steps below the credential presented. */
const walk = async (readModels: ReadModels, credential: Credential, depth: number): Promise<string | null> => {
  let current: Credential | null = credential;
  for (; current && depth < MAX_CHAIN; depth++) {
    if ('apiKey' in current) {
      const key = await readModels.get<ApiKeyRow>(API_KEYS, current.apiKey);
      if (!key) return 'the API key that issued it is unknown';
      return key.revoked ? (depth === 0 ? 'API key revoked' : 'the API key that issued it was revoked') : null;
    }
    const family: TokenFamilyRow | null = await readModels.get<TokenFamilyRow>(TOKEN_FAMILIES, current.tokenFamily);
    if (!family) return 'unknown token family';
    if (family.revoked) return depth === 0 ? 'token revoked' : 'the token that issued it was revoked';
    current = issuerOf(family);
  }
  return current ? 'issued through too many tokens' : null;
};

/**
 * Why a credential no longer works, or null when it does. A token family works while it and
 * whatever issued it (an API key, or another family's access token, and so on up) are not revoked.
 */
export const revokedBecause = (readModels: ReadModels, credential: Credential): Promise<string | null> =>
  walk(readModels, credential, 0);

/**
 * Why whatever issued a token family no longer works, or null when it does, or when the family is
 * not in the read model yet. The family itself is not judged here: its own stream is the authority.
 */
export const issuerRevokedBecause = async (readModels: ReadModels, tokenFamily: string): Promise<string | null> => {
  const family = await readModels.get<TokenFamilyRow>(TOKEN_FAMILIES, tokenFamily);
  const issuer = family && issuerOf(family);
  return issuer ? walk(readModels, issuer, 1) : null;
};

/** An API key as authentication looks it up: by the hash of its value. */
export interface ApiKeyRow {
  keyId: string;
  hash: string;
  scopes: string[];
  tenant: string;
  label: string | null;
  revoked: boolean;
  createdAt: string;
  createdBy: string;
}

export const API_KEYS = 'api_keys';

/** Signs access tokens; a deployment that only verifies them (a public key) cannot sign. */
export interface TokenSigner {
  readonly canSign: boolean;
  sign(claims: { sub: string; scope: string; tenant_id: string; fid?: string }): string;
}

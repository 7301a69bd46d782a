/** AES-256-GCM over connector secrets. */
export interface SecretBox {
  seal(settings: Record<string, unknown>): Record<string, unknown>;
  open(settings: Record<string, unknown>): Record<string, unknown>;
}

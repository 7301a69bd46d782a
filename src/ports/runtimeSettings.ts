import type { Settings } from '../domain/runtimeSettings.js';

/**
 * The runtime settings in force: the deployment's, under each tenant's own. Changes are events;
 * `reload` and `forget` make the next read see them.
 */
export interface RuntimeSettings {
  /** The deployment's settings as last loaded. */
  current(): Settings;
  /** Loads the deployment's settings as recorded now. */
  reload(): Promise<Settings>;
  /** What a tenant sees: the deployment's settings under its own (kept once read). */
  forTenant(tenant: string): Promise<Settings>;
  /** The deployment's settings as recorded now, under the tenant's as recorded now. */
  read(tenant: string): Promise<Settings>;
}

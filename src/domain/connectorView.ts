/** A connector as the API lists it; secret settings stay sealed here too. */
export interface ConnectorRow {
  id: string;
  project: string;
  type: string;
  name: string;
  settings: Record<string, unknown>;
  /** `syncing` once a sync saved a cursor, `active` after a completed sync, `error` after a failed one. */
  status: 'configuring' | 'reconfiguring' | 'syncing' | 'active' | 'error';
  createdAt: string;
  updatedAt: string;
  /** When the last sync completed; absent on rows built before syncs were recorded. */
  lastSync?: string | null;
  lastError?: { code: string; message: string; at: string } | null;
}

export const CONNECTORS = 'connectors';

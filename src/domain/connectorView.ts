/** A connector as the API lists it; secret settings stay sealed here too. */
export interface ConnectorRow {
  id: string;
  project: string;
  type: string;
  name: string;
  settings: Record<string, unknown>;
  status: 'configuring' | 'reconfiguring';
  createdAt: string;
  updatedAt: string;
}

export const CONNECTORS = 'connectors';

import type { Credential } from '../domain/auth.js';
import type { Operation, Toolset } from '../operations.js';

/** What `[mcp] toolsets` may name: operation groups, `default` (the agent's essentials) and `all`. */
export type ToolsetChoice = Toolset | 'default' | 'all';

/** What one caller sees and may call over MCP. */
export interface McpAccess {
  /** Scopes of an authenticated caller; null when every scope is allowed. */
  scopes: readonly string[] | null;
  /** Tool groups the deployment exposes; null for all. */
  toolsets: readonly ToolsetChoice[] | null;
  /** Hides every tool that writes. */
  readOnly: boolean;
  /** The key or token family the caller authenticated with, when it did. */
  credential?: Credential;
  /** The caller reached the server over HTTP while its authentication is off. */
  unauthenticated?: true;
  /** Counts a tool call against the caller's rate limit; throws over it. */
  limit?: (operation: Operation) => void;
}

export const FULL_ACCESS: McpAccess = { scopes: null, toolsets: null, readOnly: false };

/** What the deployment's `[mcp]` settings expose (the default toolset when unset), to a caller with these scopes (null: all). */
export const deploymentAccess = (
  settings: { toolsets?: readonly ToolsetChoice[] | undefined; readOnly: boolean },
  scopes: readonly string[] | null = null,
): McpAccess => {
  const toolsets = settings.toolsets ?? ['default'];
  return { scopes, toolsets: toolsets.includes('all') ? null : toolsets, readOnly: settings.readOnly };
};

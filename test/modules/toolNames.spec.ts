import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/main.js';
import { mcpToolName } from '../../src/mcp/server.js';
import { isTool } from '../../src/operations.js';
import { openTestLedger } from '../support/ledger.js';

/** Tool names the specification fixes: they keep their exact spelling. */
const SPECIFIED = new Set([
  // The Context Harness tool API (`/tools/search`, `/tools/get`, `/tools/sources`) and its MCP names.
  'search',
  'get',
  'sources',
  'context.search',
  'context.get',
  'context.sources',
  // The REST API's MCP tools.
  'context.get_related_info',
  'context.index_control',
  'context.connector_management',
  // Annotation sessions.
  'start_session',
  'annotate_chunk',
  'annotate_chunks',
  'add_relation',
  'get_progress',
  'export_annotations',
  // Background indexing jobs.
  'start_indexing_background',
  'get_job_status',
  'list_background_jobs',
  'cancel_job',
]);

/** Every other tool is `group.verb`, in lower-case snake_case words. */
const CONVENTION = /^[a-z]+(\.[a-z_]+)+$/;

describe('tool names', () => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await openTestLedger();
  });
  afterAll(() => ledger.close());

  it('are the names the specification gives, or group.verb in snake_case', () => {
    const names = ledger.parts.flatMap((part) => part.operations ?? []).filter(isTool).map(mcpToolName);
    expect(names.length).toBeGreaterThan(SPECIFIED.size);
    expect(names.filter((name) => !SPECIFIED.has(name) && !CONVENTION.test(name))).toEqual([]);
  });
});

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from './apiServer.js';

const JWT_TS = [
  "import jwt from 'jsonwebtoken';",
  '',
  'const SECRET = process.env.SECRET;',
  '',
  'export function verifyToken(token: string) {',
  '  return jwt.verify(token, SECRET);',
  '}',
  '',
  'export class SessionStore {',
  '  private readonly sessions = new Map<string, string>();',
  '  remember(id: string, user: string) {',
  '    this.sessions.set(id, user);',
  '  }',
  '}',
  '',
].join('\n');

const GUIDE_MD = '# Guide\n\nHow sessions are kept.\n';


interface RestResult {
  source: string;
  content: string;
  metadata: { path: string; type: string; source_type: string; symbol: string | null; lines: string | null };
}

/** A code chunk found by search: its kind, symbol and lines, on every surface. */
describe('code chunks in search results', () => {
  let api: ApiServer;
  let mcp: Client;
  /** The lines get_related_info gives the verifyToken chunk: what every search surface must say too. */
  let lines: string;
  let label: string;

  beforeAll(async () => {
    api = await startApiServer();
    await ingest(api, 'acme', [
      { source_id: 'src/auth/jwt.ts', body: JWT_TS },
      { source_id: 'docs/guide.md', body: GUIDE_MD },
    ]);
    mcp = new Client({ name: 'code-results-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${api.token(ALL_SCOPES)}` } },
      }),
    );
    const related = await mcp.callTool({ name: 'context.get_related_info', arguments: { file_path: 'src/auth/jwt.ts' } });
    const { chunks } = related.structuredContent as { chunks: { symbol: string | null; lines: string | null }[] };
    lines = chunks.find((c) => c.symbol === 'verifyToken')!.lines!;
    expect(lines).toMatch(/^5-\d+$/);
    label = `function verifyToken (lines ${lines}): `;
  });
  afterAll(async () => {
    await mcp.close();
    await api.close();
  });

  it('REST /search gives the symbol kind as metadata.type, with the symbol name and its lines', async () => {
    const response = await api.call('POST', '/search', { token: api.token(ALL_SCOPES), body: { query: 'verifyToken' } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const [first] = response.body.results as RestResult[];
    expect(first!.metadata).toMatchObject({
      path: 'src/auth/jwt.ts',
      type: 'function',
      source_type: 'file',
      symbol: 'verifyToken',
      lines,
    });
    expect(first!.content).toMatch(/^export function verifyToken/);
    const method = (
      (await api.call('POST', '/search', { token: api.token(ALL_SCOPES), body: { query: 'remember sessions' } })).body
        .results as RestResult[]
    ).find((r) => r.metadata.path === 'src/auth/jwt.ts');
    expect(method?.metadata).toMatchObject({ type: expect.stringMatching(/^(class|method)$/) as unknown, lines: expect.any(String) as unknown });
    // Prose is no unit of code: its type is its source's.
    const prose = (
      (await api.call('POST', '/search', { token: api.token(ALL_SCOPES), body: { query: 'guide sessions kept' } })).body
        .results as RestResult[]
    ).find((r) => r.metadata.path === 'docs/guide.md');
    expect(prose?.metadata.type).toBe('file');
  });

  it('REST /search finds code by the words inside its identifiers, as a person would type them', async () => {
    const top = async (query: string) =>
      ((await api.call('POST', '/search', { token: api.token(ALL_SCOPES), body: { query } })).body
        .results as RestResult[])[0];
    expect((await top('verify token'))?.metadata).toMatchObject({ path: 'src/auth/jwt.ts', symbol: 'verifyToken' });
    expect((await top('session store'))?.metadata).toMatchObject({ path: 'src/auth/jwt.ts', type: expect.stringMatching(/^(class|method)$/) as unknown });
  });

  it("the tool API's snippet opens with the symbol's kind, name and lines", async () => {
    const response = await fetch(`${api.server.url}/tools/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.token(ALL_SCOPES)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'verifyToken' }),
    });
    expect(response.status).toBe(200);
    const { results } = (await response.json()) as { results: { source_id: string; snippet: string }[] };
    expect(results[0]).toMatchObject({ source_id: 'src/auth/jwt.ts' });
    expect(results[0]!.snippet.startsWith(`${label}export function verifyToken`)).toBe(true);
  });

  it('MCP context.search says the kind, symbol and lines in its text and its structured results, in both request shapes', async () => {
    const withContext = await mcp.callTool({ name: 'context.search', arguments: { query: 'verifyToken', top_k: 5 } });
    expect(withContext.isError).toBeFalsy();
    const text = (withContext.content as { text: string }[])[0]!.text;
    expect(text).toContain(`function verifyToken, lines ${lines}`);
    const structured = withContext.structuredContent as { results: RestResult[] };
    expect(structured.results[0]!.metadata).toMatchObject({ type: 'function', symbol: 'verifyToken', lines });

    const toolApiShape = await mcp.callTool({ name: 'context.search', arguments: { query: 'verifyToken', limit: 5 } });
    const { results } = toolApiShape.structuredContent as { results: { snippet: string }[] };
    expect(results[0]!.snippet.startsWith(label)).toBe(true);
    expect((toolApiShape.content as { text: string }[])[0]!.text).toContain(label);
  });
});

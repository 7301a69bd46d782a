import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Jira's REST API v3 issue search, as the published reference describes it:
 * `GET /rest/api/3/search` with `jql`, `startAt`, `maxResults` and `fields`, answering
 * `{startAt, maxResults, total, issues}` with descriptions and comments in Atlassian Document Format,
 * 401 for an unknown token, and a 429 with `Retry-After` on demand. It understands the JQL the
 * connector writes: `project = "KEY"`, `updated >= "yyyy-MM-dd HH:mm"` (UTC here), `ORDER BY`.
 */
export interface StandInJiraIssue {
  key: string;
  summary: string;
  description: string;
  reporter: string;
  created: string;
  updated: string;
  comments?: { author: string; body: string; created: string }[];
}

export interface JiraStandIn {
  url: string;
  tokens: Set<string>;
  issues: Map<string, StandInJiraIssue>;
  searches: Record<string, string>[];
  rateLimitNext(seconds: number): void;
  close(): Promise<void>;
}

const adf = (text: string) => ({ type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] });

export const startJiraStandIn = async (): Promise<JiraStandIn> => {
  const tokens = new Set(['jira-valid']);
  const issues = new Map<string, StandInJiraIssue>();
  const searches: Record<string, string>[] = [];
  let limited: number | undefined;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/rest/api/3/search') return send(res, 404, { errorMessages: ['Not found'] });
    const query = Object.fromEntries(url.searchParams);
    searches.push(query);
    if (limited !== undefined) {
      const seconds = limited;
      limited = undefined;
      return send(res, 429, { errorMessages: ['Rate limit exceeded'] }, { 'retry-after': String(seconds) });
    }
    if (!tokens.has((req.headers.authorization ?? '').replace(/^Bearer\s+/, ''))) return send(res, 401, { errorMessages: ['Client must be authenticated to access this resource.'] });
    const jql = query.jql ?? '';
    const project = /project = "([^"]+)"/.exec(jql)?.[1];
    const since = /updated >= "([^"]+)"/.exec(jql)?.[1];
    const selected = [...issues.values()]
      .filter((i) => !project || i.key.startsWith(`${project}-`))
      .filter((i) => !since || Date.parse(i.updated) >= Date.parse(`${since.replace(' ', 'T')}:00Z`))
      .sort((a, b) => (/ORDER BY updated/.test(jql) ? Date.parse(a.updated) - Date.parse(b.updated) : 0) || a.key.localeCompare(b.key));
    const startAt = Number(query.startAt ?? 0);
    const maxResults = Number(query.maxResults ?? 50);
    const fields = (query.fields ?? '').split(',');
    send(res, 200, {
      expand: 'names,schema',
      startAt,
      maxResults,
      total: selected.length,
      issues: selected.slice(startAt, startAt + maxResults).map((i) => ({
        id: i.key.replace(/\D/g, ''),
        key: i.key,
        self: `http://localhost/rest/api/3/issue/${i.key}`,
        fields: fields.includes('summary')
          ? {
              summary: i.summary,
              description: adf(i.description),
              reporter: { displayName: i.reporter, accountId: i.reporter.toLowerCase() },
              created: i.created.replace('Z', '+0000'),
              updated: i.updated.replace('Z', '+0000'),
              status: { name: 'To Do' },
              comment: {
                comments: (i.comments ?? []).map((c) => ({ author: { displayName: c.author }, body: adf(c.body), created: c.created })),
                maxResults: 1048576,
                total: (i.comments ?? []).length,
                startAt: 0,
              },
            }
          : {},
      })),
    });
  };
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    issues,
    searches,
    rateLimitNext: (seconds) => (limited = seconds),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

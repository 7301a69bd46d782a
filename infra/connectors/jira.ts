import {
  ConnectorAccessError,
  ConnectorNotConfiguredError,
  ConnectorServiceError,
  type RemoteItem,
  type RemoteSource,
} from '../../src/ports/remoteSource.js';
import { optionalString, requiredString } from './settings.js';

interface AdfNode {
  type?: string;
  text?: string;
  content?: AdfNode[];
}

interface JiraIssue {
  key: string;
  fields: {
    summary?: string;
    description?: AdfNode | string | null;
    reporter?: { displayName?: string } | null;
    created: string;
    updated: string;
    status?: { name?: string };
    comment?: { comments: { author?: { displayName?: string }; body?: AdfNode | string; created: string }[] };
  };
}

/** The text of an Atlassian Document Format tree (REST v3), one paragraph a line. */
const textOf = (node: AdfNode | string | null | undefined): string => {
  if (!node) return '';
  if (typeof node === 'string') return node;
  if (node.type === 'text') return node.text ?? '';
  const inner = (node.content ?? []).map(textOf);
  return node.type === 'paragraph' || node.type === 'heading' ? `${inner.join('')}\n` : inner.join('');
};

const iso = (jiraTime: string) => new Date(jiraTime).toISOString();
/** JQL compares times in the user's time zone, to the minute: a day's margin covers any zone; re-reading an unchanged issue appends nothing. */
const jqlTime = (since: string) => new Date(Date.parse(since) - 24 * 3600_000).toISOString().slice(0, 16).replace('T', ' ');

/**
 * The issues (with their comments) a JQL query selects, through Jira's REST API v3 search with
 * `startAt` paging. A sync asks for issues updated since the last one seen, oldest first; deleted
 * issues are found by listing the keys the query still selects.
 */
export const createJiraSource = (settings: Record<string, unknown>, options: { fetch: typeof fetch }): RemoteSource => {
  const base = requiredString(settings, 'url', 'jira', 'the site, e.g. https://acme.atlassian.net').replace(/\/+$/, '');
  const token = requiredString(settings, 'token', 'jira', 'an API token');
  const email = optionalString(settings, 'email');
  const project = optionalString(settings, 'project');
  const scope = optionalString(settings, 'jql') ?? (project ? `project = "${project}"` : undefined);
  if (!scope) throw new ConnectorNotConfiguredError("The jira connector needs the 'jql' or the 'project' setting: which issues to sync", { field: 'jql' });
  const authorization = email ? `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}` : `Bearer ${token}`;
  const pageSize = typeof settings.page_size === 'number' ? Math.min(100, Math.max(1, settings.page_size)) : 50;

  const search = async (jql: string, startAt: number, fields: string) => {
    const query = new URLSearchParams({ jql, startAt: String(startAt), maxResults: String(pageSize), fields });
    const response = await options.fetch(`${base}/rest/api/3/search?${query}`, { headers: { authorization, accept: 'application/json' } });
    if (response.ok) return (await response.json()) as { startAt: number; total: number; issues: JiraIssue[] };
    const said = await response.text().then(
      (text) => ((JSON.parse(text) as { errorMessages?: string[] }).errorMessages ?? []).join('; ') || text,
      () => '',
    );
    if (response.status === 401 || response.status === 403)
      throw new ConnectorAccessError(`Jira refused the token (${response.status}${said ? `: ${said}` : ''}); check the connector's token and its permissions`, { status: response.status });
    if (response.status === 400) throw new ConnectorNotConfiguredError(`Jira refused the query: ${said}`, { field: 'jql' });
    throw new ConnectorServiceError(`Jira request failed (${response.status}${said ? `: ${said}` : ''})`, { status: response.status });
  };

  const itemOf = (issue: JiraIssue): RemoteItem => {
    const comments = (issue.fields.comment?.comments ?? []).map((c) => `**${c.author?.displayName ?? 'unknown'}**: ${textOf(c.body).trim()}`);
    return {
      sourceId: issue.key,
      title: `${issue.key} ${issue.fields.summary ?? ''}`.trim(),
      body: [`# ${issue.key} ${issue.fields.summary ?? ''}`, textOf(issue.fields.description).trim(), ...(comments.length ? ['## Comments', ...comments] : [])].join('\n\n'),
      author: issue.fields.reporter?.displayName ?? null,
      createdAt: iso(issue.fields.created),
      updatedAt: iso(issue.fields.updated),
      sourceUrl: `${base}/browse/${issue.key}`,
      metadata: { key: issue.key, status: issue.fields.status?.name ?? null },
    };
  };

  return {
    async *changes(cursor) {
      let since = typeof cursor?.updated === 'string' ? cursor.updated : undefined;
      const jql = `(${scope})${since ? ` AND updated >= "${jqlTime(since)}"` : ''} ORDER BY updated ASC, key ASC`;
      for (let startAt = 0; ; ) {
        const page = await search(jql, startAt, 'summary,description,comment,reporter,created,updated,status');
        const items = page.issues.map(itemOf);
        for (const item of items) if (!since || item.updatedAt > since) since = item.updatedAt;
        yield { items, deleted: [], cursor: since ? { updated: since } : {} };
        startAt += page.issues.length;
        if (page.issues.length === 0 || startAt >= page.total) return;
      }
    },
    async liveIds() {
      const keys = new Set<string>();
      for (let startAt = 0; ; ) {
        const page = await search(`(${scope}) ORDER BY key ASC`, startAt, 'key');
        for (const issue of page.issues) keys.add(issue.key);
        startAt += page.issues.length;
        if (page.issues.length === 0 || startAt >= page.total) return keys;
      }
    },
  };
};

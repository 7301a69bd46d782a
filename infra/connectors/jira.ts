import { z } from 'zod';
import {
  ConnectorAccessError,
  ConnectorNotConfiguredError,
  ConnectorServiceError,
  type RemoteItem,
  type RemoteSource,
} from '../../src/ports/remoteSource.js';
import { connectorFailureIn, networkCodeIn } from './endpointGuard.js';
import { optionalString, requiredString } from './settings.js';

interface AdfNode {
  type?: string;
  text?: string;
  content?: AdfNode[];
}

const AdfSchema: z.ZodType<AdfNode> = z.lazy(() =>
  z.object({ type: z.string().optional(), text: z.string().optional(), content: z.array(AdfSchema).optional() }),
);
const RichTextSchema = z.union([AdfSchema, z.string()]).nullish();
const PersonSchema = z.object({ displayName: z.string().optional() }).nullish();
const JiraTimeSchema = z.string().refine((t) => Number.isFinite(Date.parse(t)), 'a time');

/** What a search answers: the fields are there when asked for, the issue key always. */
const JiraIssueSchema = z.object({
  key: z.string().min(1),
  fields: z
    .object({
      summary: z.string().nullish(),
      description: RichTextSchema,
      reporter: PersonSchema,
      created: JiraTimeSchema.optional(),
      updated: JiraTimeSchema.optional(),
      status: z.object({ name: z.string().optional() }).nullish(),
      comment: z
        .object({ comments: z.array(z.object({ author: PersonSchema, body: RichTextSchema, created: z.string().optional() })) })
        .nullish(),
    })
    .default({}),
});
type JiraIssue = z.infer<typeof JiraIssueSchema>;

const SearchPageSchema = z.object({
  startAt: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  issues: z.array(JiraIssueSchema),
});
type SearchPage = z.infer<typeof SearchPageSchema>;

/** The text of an Atlassian Document Format tree (REST v3), one paragraph a line. */
const textOf = (node: AdfNode | string | null | undefined): string => {
  if (!node) return '';
  if (typeof node === 'string') return node;
  if (node.type === 'text') return node.text ?? '';
  const inner = (node.content ?? []).map(textOf);
  return node.type === 'paragraph' || node.type === 'heading' ? `${inner.join('')}\n` : inner.join('');
};

const iso = (jiraTime: string | undefined) => {
  if (jiraTime === undefined) throw new ConnectorServiceError('Jira answered with an issue that lacks its created or updated time');
  return new Date(jiraTime).toISOString();
};
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

  /** One page of the search; only the status of a refusal is kept, never the answer's body. */
  const search = async (jql: string, startAt: number, fields: string): Promise<SearchPage> => {
    const query = new URLSearchParams({ jql, startAt: String(startAt), maxResults: String(pageSize), fields });
    let response: Response;
    try {
      response = await options.fetch(`${base}/rest/api/3/search?${query}`, { headers: { authorization, accept: 'application/json' } });
    } catch (error) {
      const own = connectorFailureIn(error);
      if (own) throw own;
      const code = networkCodeIn(error);
      throw new ConnectorServiceError(`Jira could not be reached${code ? ` (${code})` : ''}`, undefined, { cause: error });
    }
    const { status } = response;
    if (!response.ok) {
      await response.body?.cancel();
      if (status === 401 || status === 403)
        throw new ConnectorAccessError(`Jira refused the token (${status}); check the connector's token and its permissions`, { status });
      if (status === 400) throw new ConnectorNotConfiguredError("Jira refused the query (400); check the connector's 'jql' or 'project' setting", { field: 'jql' });
      throw new ConnectorServiceError(`Jira request failed (HTTP ${status})`, { status });
    }
    const page = SearchPageSchema.safeParse(await response.json().catch(() => undefined));
    if (!page.success || page.data.startAt !== startAt)
      throw new ConnectorServiceError(`Jira answered with something that is not a page of search results (HTTP ${status})`, { status });
    return page.data;
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

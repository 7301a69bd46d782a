import {
  ConnectorAccessError,
  ConnectorNotConfiguredError,
  ConnectorServiceError,
  type RemoteItem,
  type RemotePage,
  type RemoteSource,
} from '../../src/ports/remoteSource.js';
import { connectorFailureIn, networkCodeIn } from './endpointGuard.js';
import { onFirstUse } from '../../src/engine/onFirstUse.js';
import { flag, optionalString, requiredString } from './settings.js';

export interface GitHubSourceOptions {
  fetch: typeof fetch;
}

interface Issue {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  html_url: string;
  user: { login: string } | null;
  labels: (string | { name?: string })[];
  created_at: string;
  updated_at: string;
  pull_request?: unknown;
}

interface ReviewComment {
  user: { login: string } | null;
  body: string;
  path: string;
  line?: number | null;
  created_at: string;
}

/**
 * GitHub's answer as a connector error: what went wrong and what to do about it. Only the status is
 * kept of an answer, never its body: the error is shown to whoever configured the connector.
 */
const translate = (error: unknown, repository: string): Error => {
  const own = connectorFailureIn(error);
  if (own) return own;
  // A request that got no answer has no response (the client then reports a status of 500).
  const status = (error as { response?: { status?: number } }).response?.status;
  if (status === 401) return new ConnectorAccessError('GitHub refused the token (401); give the connector a valid token', { status });
  if (status === 403)
    return new ConnectorAccessError(
      `GitHub refused access to ${repository} (403); the token needs read access to its issues and pull requests`,
      { status },
    );
  if (status === 404) return new ConnectorAccessError(`GitHub has no repository ${repository} this token can see (404)`, { status });
  if (status) return new ConnectorServiceError(`GitHub request failed (HTTP ${status})`, { status }, { cause: error });
  const code = networkCodeIn(error);
  return new ConnectorServiceError(`GitHub could not be reached${code ? ` (${code})` : ''}`, undefined, { cause: error });
};

/** A page of the issue listing, refused when it is not one. */
const issuesOf = (data: unknown): Issue[] => {
  const isIssue = (i: unknown) =>
    typeof i === 'object' && i !== null && Number.isInteger((i as Issue).number) && typeof (i as Issue).updated_at === 'string';
  if (!Array.isArray(data) || !data.every(isIssue)) throw new ConnectorServiceError('GitHub answered with something that is not a list of issues');
  return data as Issue[];
};

/**
 * Issues and pull requests (with their review comments) of one repository. A sync asks for what
 * was updated since its cursor, oldest first, so a cursor saved after each page resumes where it
 * stopped; deletions are found by listing the numbers that still exist.
 */
export const createGitHubSource = (settings: Record<string, unknown>, options: GitHubSourceOptions): RemoteSource => {
  const repository = requiredString(settings, 'repository', 'github', "the repository as 'owner/name'");
  const [owner, repo, ...rest] = repository.split('/');
  if (!owner || !repo || rest.length)
    throw new ConnectorNotConfiguredError(`The 'repository' setting must be 'owner/name', not '${repository}'`, {
      field: 'repository',
    });
  const includeIssues = flag(settings, 'include_issues', true);
  const includePrs = flag(settings, 'include_prs', true);
  const token = optionalString(settings, 'token');
  const connect = onFirstUse(async () => {
    const { Octokit } = await import('@octokit/rest');
    return new Octokit({
      ...(token ? { auth: token } : {}),
      baseUrl: optionalString(settings, 'api_url') ?? 'https://api.github.com',
      request: { fetch: options.fetch },
      userAgent: 'context-ledger',
      // Failures become connector errors recorded on the job; the client's own console lines add nothing.
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    });
  });
  // GitHub serves at most 100 items a page.
  const pageSize = settings.page_size;
  const perPage = typeof pageSize === 'number' && Number.isInteger(pageSize) ? Math.min(100, Math.max(1, pageSize)) : 100;
  const wanted = (issue: Issue) => (issue.pull_request ? includePrs : includeIssues);
  const idOf = (issue: Issue) => `${issue.pull_request ? 'pulls' : 'issues'}/${issue.number}`;

  const reviewComments = async (number: number): Promise<ReviewComment[]> => {
    const octokit = await connect();
    return octokit.paginate(octokit.rest.pulls.listReviewComments, { owner, repo, pull_number: number, per_page: perPage });
  };

  const itemOf = (issue: Issue, comments: ReviewComment[]): RemoteItem => {
    const kind = issue.pull_request ? 'pull_request' : 'issue';
    const review = comments.map(
      (c) => `**${c.user?.login ?? 'unknown'}** on ${c.path}${c.line ? `:${c.line}` : ''}: ${c.body}`,
    );
    return {
      sourceId: idOf(issue),
      title: `#${issue.number} ${issue.title}`,
      body: [`# ${issue.title}`, issue.body ?? '', ...(review.length ? ['## Review comments', ...review] : [])].join('\n\n'),
      author: issue.user?.login ?? null,
      createdAt: issue.created_at,
      updatedAt: issue.updated_at,
      sourceUrl: issue.html_url,
      contentType: 'text/markdown',
      metadata: {
        repository,
        kind,
        number: issue.number,
        state: issue.state,
        labels: issue.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
        ...(comments.length ? { review_comment_paths: [...new Set(comments.map((c) => c.path))] } : {}),
      },
    };
  };

  const listing = async function* (since: string | undefined) {
    const octokit = await connect();
    yield* octokit.paginate.iterator(octokit.rest.issues.listForRepo, {
      owner,
      repo,
      state: 'all',
      sort: 'updated',
      direction: 'asc',
      per_page: perPage,
      ...(since ? { since } : {}),
    });
  };

  return {
    async *changes(cursor) {
      let since = typeof cursor?.since === 'string' ? cursor.since : undefined;
      try {
        for await (const page of listing(since)) {
          const items: RemoteItem[] = [];
          for (const issue of issuesOf(page.data)) {
            if (!since || issue.updated_at > since) since = issue.updated_at;
            if (!wanted(issue)) continue;
            items.push(itemOf(issue, issue.pull_request ? await reviewComments(issue.number) : []));
          }
          const next: RemotePage = { items, deleted: [], cursor: since ? { since } : {} };
          yield next;
        }
      } catch (error) {
        throw translate(error, repository);
      }
    },
    async liveIds() {
      const ids = new Set<string>();
      try {
        for await (const page of listing(undefined)) {
          for (const issue of issuesOf(page.data)) if (wanted(issue)) ids.add(idOf(issue));
        }
      } catch (error) {
        throw translate(error, repository);
      }
      return ids;
    },
  };
};

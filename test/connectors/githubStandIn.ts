import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the parts of GitHub's REST API the connector uses, answering as the
 * published reference describes: `GET /repos/{owner}/{repo}/issues` (pull requests included, with a
 * `pull_request` key; `state`, `sort`, `direction`, `since`, `per_page`, `page`; a `Link` header with
 * `next`/`last`), `GET /repos/{owner}/{repo}/pulls/{n}/comments` (review comments, paged alike), the
 * `x-ratelimit-*` headers on every answer, 401 `Bad credentials` for an unknown token, 404 for a
 * repository the token cannot see, and a secondary rate limit (429 with `retry-after`) on demand.
 */
export interface StandInIssue {
  number: number;
  title: string;
  body: string;
  user: string;
  state?: 'open' | 'closed';
  labels?: string[];
  created_at: string;
  updated_at: string;
  pull?: boolean;
  reviewComments?: { user: string; path: string; line: number; body: string; created_at: string }[];
}

export interface GitHubRequest {
  path: string;
  query: Record<string, string>;
}

export interface GitHubStandIn {
  url: string;
  repository: string;
  tokens: Set<string>;
  issues: Map<number, StandInIssue>;
  requests: GitHubRequest[];
  /** The next request whose path and query match answers 429 with `retry-after: seconds`. */
  rateLimitNext(match: (request: GitHubRequest) => boolean, seconds: number): void;
  /**
   * The next matching request waits until released: `arrived` resolves when it comes in, so a test
   * can act while a sync is provably in the middle.
   */
  hold(match: (request: GitHubRequest) => boolean): { arrived: Promise<void>; release(): void };
  close(): Promise<void>;
}

const iso = (s: string) => new Date(s).toISOString().replace('.000Z', 'Z');

export const startGitHubStandIn = async (repository = 'acme/widgets'): Promise<GitHubStandIn> => {
  const tokens = new Set<string>(['ghp_valid']);
  const issues = new Map<number, StandInIssue>();
  const requests: GitHubRequest[] = [];
  const limits: { match: (r: GitHubRequest) => boolean; seconds: number }[] = [];
  const holds: { match: (r: GitHubRequest) => boolean; arrived: () => void; gate: Promise<void> }[] = [];
  let remaining = 5000;
  let base = '';

  const user = (login: string) => ({ login, id: login.length, type: 'User', html_url: `https://github.com/${login}` });
  const issueJson = (i: StandInIssue) => ({
    id: 1000 + i.number,
    node_id: `I_${i.number}`,
    url: `${base}/repos/${repository}/issues/${i.number}`,
    html_url: `https://github.com/${repository}/${i.pull ? 'pull' : 'issues'}/${i.number}`,
    number: i.number,
    state: i.state ?? 'open',
    title: i.title,
    body: i.body,
    user: user(i.user),
    labels: (i.labels ?? []).map((name, k) => ({ id: k, name, color: 'ededed' })),
    comments: 0,
    created_at: iso(i.created_at),
    updated_at: iso(i.updated_at),
    closed_at: null,
    author_association: 'MEMBER',
    ...(i.pull
      ? {
          pull_request: {
            url: `${base}/repos/${repository}/pulls/${i.number}`,
            html_url: `https://github.com/${repository}/pull/${i.number}`,
          },
        }
      : {}),
  });

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    remaining = Math.max(0, remaining - 1);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      'x-ratelimit-used': String(5000 - remaining),
      'x-ratelimit-resource': 'core',
      'x-github-api-version-selected': '2022-11-28',
      ...headers,
    });
    res.end(JSON.stringify(body));
  };

  /** One page of `all`, with GitHub's Link header to the other pages. */
  const page = (res: ServerResponse, path: string, query: Record<string, string>, all: unknown[]) => {
    const perPage = Math.min(100, Number(query.per_page ?? 30));
    const number = Math.max(1, Number(query.page ?? 1));
    const last = Math.max(1, Math.ceil(all.length / perPage));
    const link = (p: number) => `<${base}${path}?${new URLSearchParams({ ...query, page: String(p) })}>`;
    const links = [
      ...(number < last ? [`${link(number + 1)}; rel="next"`, `${link(last)}; rel="last"`] : []),
      ...(number > 1 ? [`${link(1)}; rel="first"`, `${link(number - 1)}; rel="prev"`] : []),
    ];
    send(res, 200, all.slice((number - 1) * perPage, number * perPage), links.length ? { link: links.join(', ') } : {});
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    const request = { path: url.pathname, query: Object.fromEntries(url.searchParams) };
    requests.push(request);
    const held = holds.findIndex((h) => h.match(request));
    if (held >= 0) {
      const [h] = holds.splice(held, 1);
      h!.arrived();
      await h!.gate;
    }
    const limited = limits.findIndex((l) => l.match(request));
    if (limited >= 0) {
      const [l] = limits.splice(limited, 1);
      send(res, 429, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' }, { 'retry-after': String(l!.seconds) });
      return;
    }
    const auth = req.headers.authorization ?? '';
    const token = auth.replace(/^(token|bearer)\s+/i, '');
    if (!tokens.has(token)) {
      send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
      return;
    }
    const prefix = `/repos/${repository}`;
    if (!url.pathname.startsWith(`${prefix}/`)) {
      send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
      return;
    }
    const rest = url.pathname.slice(prefix.length);
    if (rest === '/issues') {
      const since = request.query.since ? Date.parse(request.query.since) : null;
      const state = request.query.state ?? 'open';
      const direction = request.query.direction ?? 'desc';
      const key = request.query.sort === 'updated' ? 'updated_at' : 'created_at';
      const listed = [...issues.values()]
        .filter((i) => state === 'all' || (i.state ?? 'open') === state)
        .filter((i) => since === null || Date.parse(i.updated_at) >= since)
        .sort((a, b) => (Date.parse(a[key]) - Date.parse(b[key])) * (direction === 'asc' ? 1 : -1) || a.number - b.number)
        .map(issueJson);
      page(res, url.pathname, request.query, listed);
      return;
    }
    const comments = /^\/pulls\/(\d+)\/comments$/.exec(rest);
    if (comments) {
      const pull = issues.get(Number(comments[1]));
      if (!pull?.pull) {
        send(res, 404, { message: 'Not Found', status: '404' });
        return;
      }
      page(
        res,
        url.pathname,
        request.query,
        (pull.reviewComments ?? []).map((c, k) => ({
          id: 5000 + k,
          path: c.path,
          line: c.line,
          body: c.body,
          user: user(c.user),
          diff_hunk: '@@ -1,3 +1,4 @@',
          created_at: iso(c.created_at),
          updated_at: iso(c.created_at),
          html_url: `https://github.com/${repository}/pull/${pull.number}#discussion_r${5000 + k}`,
          pull_request_url: `${base}${prefix}/pulls/${pull.number}`,
        })),
      );
      return;
    }
    send(res, 404, { message: 'Not Found', status: '404' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    repository,
    tokens,
    issues,
    requests,
    rateLimitNext: (match, seconds) => limits.push({ match, seconds }),
    hold: (match) => {
      let release!: () => void;
      let arrived!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      holds.push({ match, arrived, gate });
      return { arrived: arrival, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

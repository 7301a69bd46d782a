import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Slack's Web API methods the connector calls, as the published reference
 * describes them: form-encoded POSTs to `/api/<method>`, `{ok: true, …}` answers, errors as
 * `{ok: false, error}` with status 200, cursor paging through `response_metadata.next_cursor`,
 * `conversations.history` newest first with an exclusive `oldest`, `conversations.replies` with the
 * parent first, and a 429 with `Retry-After` on demand.
 */
export interface StandInMessage {
  ts: string;
  user: string;
  text: string;
  thread_ts?: string;
}

export interface SlackStandIn {
  url: string;
  tokens: Set<string>;
  channels: Map<string, { name: string; messages: StandInMessage[] }>;
  calls: { method: string; params: Record<string, string> }[];
  rateLimitNext(method: string, seconds: number): void;
  close(): Promise<void>;
}

const encode = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64');
const decode = (cursor: string | undefined) => (cursor ? Number(Buffer.from(cursor, 'base64').toString().split(':')[1]) : 0);

export const startSlackStandIn = async (): Promise<SlackStandIn> => {
  const tokens = new Set(['xoxb-valid']);
  const channels = new Map<string, { name: string; messages: StandInMessage[] }>();
  const calls: SlackStandIn['calls'] = [];
  const limited = new Map<string, number>();

  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => resolve(text));
    });
  const send = (res: ServerResponse, payload: Record<string, unknown>, status = 200, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(payload));
  };
  const paged = <T>(all: T[], params: Record<string, string>) => {
    const limit = Math.min(1000, Number(params.limit ?? 100));
    const offset = decode(params.cursor);
    const more = offset + limit < all.length;
    return { slice: all.slice(offset, offset + limit), more, meta: { next_cursor: more ? encode(offset + limit) : '' } };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
    const text = await body(req);
    const params = req.headers['content-type']?.includes('json')
      ? (JSON.parse(text || '{}') as Record<string, string>)
      : Object.fromEntries(new URLSearchParams(text));
    calls.push({ method, params });
    const wait = limited.get(method);
    if (wait !== undefined) {
      limited.delete(method);
      send(res, { ok: false, error: 'ratelimited' }, 429, { 'retry-after': String(wait) });
      return;
    }
    const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '') || params.token;
    if (!token) return send(res, { ok: false, error: 'not_authed' });
    if (!tokens.has(token)) return send(res, { ok: false, error: 'invalid_auth' });
    if (method === 'conversations.list') {
      const { slice, meta } = paged([...channels].map(([id, c]) => ({ id, name: c.name, is_channel: true })), params);
      return send(res, { ok: true, channels: slice, response_metadata: meta });
    }
    const channel = channels.get(params.channel ?? '');
    if (!channel) return send(res, { ok: false, error: 'channel_not_found' });
    if (method === 'conversations.history') {
      const oldest = params.oldest ? Number(params.oldest) : -Infinity;
      const top = channel.messages
        .filter((m) => !m.thread_ts || m.thread_ts === m.ts)
        .filter((m) => Number(m.ts) > oldest)
        .sort((a, b) => Number(b.ts) - Number(a.ts))
        .map((m) => {
          const replies = channel.messages.filter((r) => r.thread_ts === m.ts && r.ts !== m.ts);
          return { type: 'message', ...m, ...(replies.length ? { thread_ts: m.ts, reply_count: replies.length } : {}) };
        });
      const { slice, more, meta } = paged(top, params);
      return send(res, { ok: true, messages: slice, has_more: more, response_metadata: meta });
    }
    if (method === 'conversations.replies') {
      const thread = channel.messages
        .filter((m) => m.ts === params.ts || m.thread_ts === params.ts)
        .sort((a, b) => Number(a.ts) - Number(b.ts))
        .map((m) => ({ type: 'message', ...m, thread_ts: params.ts }));
      const { slice, more, meta } = paged(thread, params);
      return send(res, { ok: true, messages: slice, has_more: more, response_metadata: meta });
    }
    send(res, { ok: false, error: 'unknown_method' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, { ok: false, error: String(error) }, 500));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    tokens,
    channels,
    calls,
    rateLimitNext: (method, seconds) => limited.set(method, seconds),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

import type { WebClientOptions } from '@slack/web-api';
import {
  ConnectorAccessError,
  ConnectorNotConfiguredError,
  ConnectorServiceError,
  type RemoteItem,
  type RemoteSource,
} from '../../src/ports/remoteSource.js';
import { connectorFailureIn, networkCodeIn } from './endpointGuard.js';
import { onFirstUse } from '../../src/engine/onFirstUse.js';
import { optionalString, requiredString, stringList } from './settings.js';

interface Message {
  ts?: string;
  thread_ts?: string;
  user?: string;
  text?: string;
  reply_count?: number;
}

const ACCESS_ERRORS = new Set(['invalid_auth', 'not_authed', 'token_expired', 'token_revoked', 'account_inactive', 'missing_scope', 'not_in_channel', 'channel_not_found']);

/** A scope as Slack names one (`channels:history`), the only part of an answer's body kept besides a known error code. */
const SCOPES = /^[a-z_.]+:[a-z_.]+(,[a-z_.]+:[a-z_.]+)*$/;

/** Slack's answer as a connector error: a known error code or the HTTP status, never the answer's body. */
const translate = (error: unknown): Error => {
  const own = connectorFailureIn(error);
  if (own) return own;
  const data = (error as { data?: { error?: string; needed?: string } }).data;
  const code = data?.error;
  const needed = data?.needed && data.needed.length <= 200 && SCOPES.test(data.needed) ? data.needed : undefined;
  if (code && ACCESS_ERRORS.has(code))
    return new ConnectorAccessError(
      `Slack refused the request (${code}${needed ? `; the token needs the scope ${needed}` : ''}); check the connector's token and channels`,
      { code },
    );
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number') return new ConnectorServiceError(`Slack request failed (HTTP ${status})`, { status }, { cause: error });
  if (code) return new ConnectorServiceError('Slack refused the request', undefined, { cause: error });
  const network = networkCodeIn(error);
  return new ConnectorServiceError(`Slack could not be reached${network ? ` (${network})` : ''}`, undefined, { cause: error });
};

const isoOf = (ts: string) => new Date(Math.round(Number(ts) * 1000)).toISOString();
/** Slack's ids: a channel id starts with C or G and is upper case. */
const isChannelId = (value: string) => /^[CG][A-Z0-9]{6,}$/.test(value);

/**
 * The messages of some channels, each thread (a message with its replies) one document. A sync
 * asks each channel's history for messages newer than the newest one it saw there, paging with
 * Slack's cursors, then lists the threads still there so that deleted ones are removed; the client
 * waits out 429s for as long as `Retry-After` says.
 */
export const createSlackSource = (settings: Record<string, unknown>, options: { fetch: typeof fetch }): RemoteSource => {
  const token = requiredString(settings, 'token', 'slack', 'a bot token (xoxb-…) with channels:history');
  const channels = stringList(settings, 'channels');
  if (channels.length === 0)
    throw new ConnectorNotConfiguredError("The slack connector needs the 'channels' setting: the channels to sync", { field: 'channels' });
  const workspace = optionalString(settings, 'workspace');
  const apiUrl = optionalString(settings, 'api_url');
  const connect = onFirstUse(async () => {
    const { LogLevel, WebClient } = await import('@slack/web-api');
    return new WebClient(token, {
      // The client's own type of fetch describes the same function, with fewer header methods.
      fetch: options.fetch as unknown as NonNullable<WebClientOptions['fetch']>,
      allowAbsoluteUrls: false,
      ...(apiUrl ? { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` } : {}),
      logLevel: LogLevel.ERROR,
      logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, setLevel: () => undefined, getLevel: () => LogLevel.ERROR, setName: () => undefined },
      retryConfig: { retries: 5, factor: 2, minTimeout: 200, maxTimeout: 30_000 },
    });
  });
  const limit = typeof settings.page_size === 'number' ? Math.min(200, Math.max(1, settings.page_size)) : 200;

  /** Channel names become ids through conversations.list, paged to the end. */
  const channelIds = async (): Promise<Map<string, string>> => {
    const ids = new Map<string, string>();
    const names = channels.filter((c) => !isChannelId(c)).map((c) => c.replace(/^#/, ''));
    for (const id of channels.filter(isChannelId)) ids.set(id, id);
    if (names.length === 0) return ids;
    const client = await connect();
    let cursor: string | undefined;
    do {
      const page = await client.conversations.list({ limit, types: 'public_channel,private_channel', ...(cursor ? { cursor } : {}) });
      for (const channel of page.channels ?? []) if (channel.name && channel.id && names.includes(channel.name)) ids.set(channel.name, channel.id);
      cursor = page.response_metadata?.next_cursor || undefined;
    } while (cursor);
    const unknown = names.filter((n) => !ids.has(n));
    if (unknown.length) throw new ConnectorAccessError(`Slack has no channel ${unknown.map((n) => `#${n}`).join(', ')} this token can see`);
    return ids;
  };

  const threadOf = async (channel: string, parent: Message): Promise<RemoteItem> => {
    const replies: Message[] = [];
    if (parent.reply_count) {
      const client = await connect();
      let cursor: string | undefined;
      do {
        const page = await client.conversations.replies({ channel, ts: parent.ts!, limit, ...(cursor ? { cursor } : {}) });
        replies.push(...((page.messages ?? []) as Message[]).filter((m) => m.ts !== parent.ts));
        cursor = page.response_metadata?.next_cursor || undefined;
      } while (cursor);
    }
    const last = replies.at(-1)?.ts ?? parent.ts!;
    const lines = [parent, ...replies].map((m) => `${m.user ?? 'unknown'}: ${m.text ?? ''}`);
    return {
      sourceId: `${channel}/${parent.ts!}`,
      title: (parent.text ?? '').split('\n')[0]!.slice(0, 120) || null,
      body: lines.join('\n\n'),
      author: parent.user ?? null,
      createdAt: isoOf(parent.ts!),
      updatedAt: isoOf(last),
      sourceUrl: workspace ? `https://${workspace}.slack.com/archives/${channel}/p${parent.ts!.replace('.', '')}` : null,
      metadata: { channel, ts: parent.ts, replies: replies.length },
    };
  };

  return {
    async *changes(cursor) {
      const latest = { ...((cursor?.latest ?? {}) as Record<string, string>) };
      try {
        const client = await connect();
        for (const [, channel] of await channelIds()) {
          const oldest = latest[channel];
          let newest = oldest;
          let page: string | undefined;
          do {
            const history = await client.conversations.history({ channel, limit, ...(oldest ? { oldest } : {}), ...(page ? { cursor: page } : {}) });
            const items: RemoteItem[] = [];
            for (const message of (history.messages ?? []) as Message[]) {
              if (!message.ts || (message.thread_ts && message.thread_ts !== message.ts)) continue;
              items.push(await threadOf(channel, message));
              if (!newest || Number(message.ts) > Number(newest)) newest = message.ts;
            }
            page = (history.has_more && history.response_metadata?.next_cursor) || undefined;
            // History pages run newest first: the channel's mark moves only once all of them are in.
            if (!page && newest) latest[channel] = newest;
            yield { items, deleted: [], cursor: { latest: { ...latest } } };
          } while (page);
        }
      } catch (error) {
        throw translate(error);
      }
    },
    /** Every thread still in the channels: history pages to the end, without a mark, finds what was deleted. */
    async liveIds() {
      const live = new Set<string>();
      try {
        const client = await connect();
        for (const [, channel] of await channelIds()) {
          let page: string | undefined;
          do {
            const history = await client.conversations.history({ channel, limit, ...(page ? { cursor: page } : {}) });
            for (const message of (history.messages ?? []) as Message[])
              if (message.ts && (!message.thread_ts || message.thread_ts === message.ts)) live.add(`${channel}/${message.ts}`);
            page = (history.has_more && history.response_metadata?.next_cursor) || undefined;
          } while (page);
        }
      } catch (error) {
        throw translate(error);
      }
      return live;
    },
  };
};

import type { RemoteSourceFactory } from '../../src/ports/remoteSource.js';
import { createGitHubSource } from './github.js';
import { createJiraSource } from './jira.js';
import { politeFetch, type PoliteFetchOptions } from './politeFetch.js';
import { createS3Source } from './s3.js';
import { createSlackSource } from './slack.js';

/** Remote sources on the services' official clients, every request made through a rate-limit-honouring fetch. */
export const createRemoteSources = (options: PoliteFetchOptions = {}): RemoteSourceFactory => {
  const fetch = politeFetch(options);
  return (kind, settings) => {
    switch (kind) {
      case 'github':
        return createGitHubSource(settings, { fetch });
      // The AWS SDK retries throttling (SlowDown, 503) with backoff itself.
      case 'jira':
        return createJiraSource(settings, { fetch });
      case 's3':
        return createS3Source(settings);
      // The Slack client waits out 429s for as long as Retry-After says, and retries with backoff.
      case 'slack':
        return createSlackSource(settings);
      default:
        return null;
    }
  };
};

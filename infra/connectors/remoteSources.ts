import type { RemoteSourceFactory } from '../../src/ports/remoteSource.js';
import { createGitHubSource } from './github.js';
import { politeFetch, type PoliteFetchOptions } from './politeFetch.js';

/** The connector kinds a sync fetches from a remote service. */
export const REMOTE_KINDS = ['github'] as const;

/** Remote sources on the services' official clients, every request made through a rate-limit-honouring fetch. */
export const createRemoteSources = (options: PoliteFetchOptions = {}): RemoteSourceFactory => {
  const fetch = politeFetch(options);
  return (kind, settings) => {
    switch (kind) {
      case 'github':
        return createGitHubSource(settings, { fetch });
      default:
        return null;
    }
  };
};

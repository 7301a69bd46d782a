import { DEFAULT_ENDPOINT_POLICY, endpointSettingProblem, type EndpointPolicy } from '../../src/domain/connectorEndpoints.js';
import type { RemoteSourceFactory } from '../../src/ports/remoteSource.js';
import { connectorAgents, ConnectorEndpointError, guardedFetch } from './endpointGuard.js';
import { createGitHubSource } from './github.js';
import { createJiraSource } from './jira.js';
import { politeFetch, type PoliteFetchOptions } from './politeFetch.js';
import { createS3Source } from './s3.js';
import { createSlackSource } from './slack.js';

export interface RemoteSourcesOptions extends Omit<PoliteFetchOptions, 'fetch'> {
  /** Where connectors may send requests. */
  endpoints?: EndpointPolicy;
}

/**
 * Remote sources on the services' official clients. Every request goes through connections that
 * check where it goes (the settings when a source is made, each request and redirect, the address
 * connected to), and the fetch-based clients through a rate-limit-honouring fetch.
 */
export const createRemoteSources = ({ endpoints = DEFAULT_ENDPOINT_POLICY, ...polite }: RemoteSourcesOptions = {}): RemoteSourceFactory => {
  const agents = connectorAgents(endpoints);
  const fetchFor = (kind: string) => politeFetch({ ...polite, fetch: guardedFetch(kind, endpoints, agents) });
  return (kind, settings) => {
    const refused = endpointSettingProblem(kind, settings, endpoints);
    if (refused) throw new ConnectorEndpointError(`The ${kind} connector's '${refused.field}' ${refused.problem}`, { field: refused.field });
    switch (kind) {
      case 'github':
        return createGitHubSource(settings, { fetch: fetchFor(kind) });
      case 'jira':
        return createJiraSource(settings, { fetch: fetchFor(kind) });
      // The AWS SDK retries throttling (SlowDown, 503) with backoff itself.
      case 's3':
        return createS3Source(settings, { endpoints, agents });
      // The Slack client waits out 429s for as long as Retry-After says, and retries with backoff.
      case 'slack':
        return createSlackSource(settings, { fetch: guardedFetch(kind, endpoints, agents) });
      default:
        return null;
    }
  };
};

import { BlockList, isIP } from 'node:net';

/**
 * Where remote connectors may send requests. A connector's settings come from a tenant, and its
 * requests leave from the server: without these rules a tenant could make the server fetch its own
 * loopback services, a private network or a cloud metadata endpoint (with the connector's
 * credentials attached) and read the answer back.
 */
export interface EndpointPolicy {
  /** Hosts (`host`, `host:port`, `*.domain`) allowed besides each service's public hosts. */
  readonly allowedHosts: readonly string[];
  /** Whether a connector may reach loopback, private and link-local addresses. */
  readonly allowPrivateAddresses: boolean;
}

export const DEFAULT_ENDPOINT_POLICY: EndpointPolicy = { allowedHosts: [], allowPrivateAddresses: false };

interface ServiceEndpoint {
  service: string;
  /** The setting that names another server than the public service. */
  setting: string;
  /** The service's own hosts, reached over https on the default port. */
  publicHost: RegExp;
}

/** The services remote connectors talk to, by connector type. */
export const SERVICE_ENDPOINTS: Readonly<Record<string, ServiceEndpoint>> = {
  github: { service: 'GitHub', setting: 'api_url', publicHost: /^api\.github\.com$/ },
  jira: { service: 'Jira', setting: 'url', publicHost: /^[a-z0-9][a-z0-9-]*\.atlassian\.net$/ },
  slack: { service: 'Slack', setting: 'api_url', publicHost: /^slack\.com$/ },
  // s3.amazonaws.com, s3.eu-west-1.amazonaws.com, bucket.s3.dualstack.us-east-1.amazonaws.com, s3-fips…, amazonaws.com.cn
  s3: { service: 'S3', setting: 'endpoint', publicHost: /^([a-z0-9.-]+\.)?s3([.-][a-z0-9-]+)*\.amazonaws\.com(\.cn)?$/ },
};

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address is one of the internet's: not loopback, private, link-local, shared, multicast or reserved (IPv4-mapped IPv6 included). */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
};

/** A URL's host name without IPv6 brackets. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

const effectivePort = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');

/** `host`, `host:port` or `*.domain` (any host below it), as the operator wrote it, against a URL. */
const matchesAllowed = (entry: string, url: URL): boolean => {
  const separator = entry.lastIndexOf(':');
  const hasPort = separator > entry.lastIndexOf(']') && /^\d+$/.test(entry.slice(separator + 1));
  const host = hasPort ? entry.slice(0, separator) : entry;
  if (hasPort && entry.slice(separator + 1) !== effectivePort(url)) return false;
  return host.startsWith('*.') ? url.hostname.endsWith(host.slice(1)) : url.hostname === host;
};

const describePolicy = (kind: string) => {
  const endpoint = SERVICE_ENDPOINTS[kind];
  return `${endpoint ? `${endpoint.service}'s own hosts over https, or ` : ''}hosts the operator allows in connectors.allowed_hosts`;
};

/**
 * Why a connector of `kind` may not send a request to `target`, or null when it may. A base URL
 * (a setting) may carry neither query nor fragment: either would cut off the path the connector
 * appends. The resolved addresses are checked when connecting.
 */
export const endpointProblem = (kind: string, target: string, policy: EndpointPolicy, { base = false } = {}): string | null => {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry a user name or password (put credentials in the token settings)';
  if (target.includes('#')) return 'must not have a fragment (#)';
  if (base && target.includes('?')) return 'must not have a query (?)';
  const service = SERVICE_ENDPOINTS[kind];
  const isServiceHost = service !== undefined && service.publicHost.test(url.hostname) && url.protocol === 'https:' && url.port === '';
  if (!isServiceHost && !policy.allowedHosts.some((entry) => matchesAllowed(entry, url)))
    return `names host ${url.host}, which connectors may not reach: only ${describePolicy(kind)}`;
  const address = bareHost(url.hostname);
  if (isIP(address) && !policy.allowPrivateAddresses && !isPublicAddress(address))
    return `names ${address}, a loopback, private or link-local address, which connectors may not reach unless the operator sets connectors.allow_private_addresses`;
  return null;
};

/** The setting of a remote connector that names its server, with its value, when one is set. */
export const endpointSetting = (kind: string, settings: Record<string, unknown>): { field: string; value: unknown } | null => {
  const endpoint = SERVICE_ENDPOINTS[kind];
  if (!endpoint || settings[endpoint.setting] === undefined) return null;
  return { field: endpoint.setting, value: settings[endpoint.setting] };
};

/** Why the server a connector's settings name is refused, as `'<setting>' <problem>`, or null. */
export const endpointSettingProblem = (kind: string, settings: Record<string, unknown>, policy: EndpointPolicy): { field: string; problem: string } | null => {
  const named = endpointSetting(kind, settings);
  if (!named) return null;
  if (typeof named.value !== 'string' || !named.value.trim()) return { field: named.field, problem: 'must be a URL' };
  const problem = endpointProblem(kind, named.value.trim(), policy, { base: true });
  return problem ? { field: named.field, problem } : null;
};

import { describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINT_POLICY, endpointProblem, isPublicAddress } from './connectorEndpoints.js';

const operator = (allowedHosts: string[], allowPrivateAddresses = false) => ({ allowedHosts, allowPrivateAddresses });

describe('where a connector may send a request', () => {
  it.each([
    ['github', 'https://api.github.com/repos/o/r/issues'],
    ['jira', 'https://acme.atlassian.net/rest/api/3/search?jql=x'],
    ['slack', 'https://slack.com/api/conversations.list'],
    ['s3', 'https://notes.s3.eu-west-1.amazonaws.com/'],
    ['s3', 'https://s3.dualstack.us-east-1.amazonaws.com/notes'],
    ['s3', 'https://s3-fips.us-gov-west-1.amazonaws.com/'],
  ])('lets a %s connector reach its service: %s', (kind, url) => {
    expect(endpointProblem(kind, url, DEFAULT_ENDPOINT_POLICY)).toBeNull();
  });

  it.each([
    ['github', 'https://api.github.com.evil.example/'],
    ['github', 'https://slack.com/api/'],
    ['jira', 'https://atlassian.net.evil.example/'],
    ['jira', 'https://a.b.atlassian.net/'],
    ['s3', 'https://ec2-1-2-3-4.compute-1.amazonaws.com/'],
    ['s3', 'http://s3.amazonaws.com/'],
  ])('keeps a %s connector from %s', (kind, url) => {
    expect(endpointProblem(kind, url, DEFAULT_ENDPOINT_POLICY)).toMatch(/which connectors may not reach/);
  });

  it('matches the operator’s host, host:port and *.domain entries', () => {
    const policy = operator(['ghe.example.com', 'minio.internal:9000', '*.corp.example', '[fd00::1]'], true);
    expect(endpointProblem('github', 'http://ghe.example.com:8080/api/v3', policy)).toBeNull();
    expect(endpointProblem('s3', 'http://minio.internal:9000/', policy)).toBeNull();
    expect(endpointProblem('s3', 'http://minio.internal:9001/', policy)).not.toBeNull();
    expect(endpointProblem('jira', 'https://jira.corp.example/', policy)).toBeNull();
    expect(endpointProblem('jira', 'https://corp.example/', policy)).not.toBeNull();
    expect(endpointProblem('jira', 'https://evilcorp.example/', policy)).not.toBeNull();
    expect(endpointProblem('jira', 'https://[fd00::1]:8443/', policy)).toBeNull();
    expect(endpointProblem('jira', 'https://[fd00::1]:8443/', operator(['[fd00::1]']))).toMatch(/private or link-local/);
  });

  it('refuses credentials in the URL, a fragment, and a query in a base URL', () => {
    const policy = operator(['ghe.example.com']);
    expect(endpointProblem('github', 'https://u:p@ghe.example.com/', policy)).toMatch(/user name or password/);
    expect(endpointProblem('github', 'https://ghe.example.com/x#', policy)).toMatch(/fragment/);
    expect(endpointProblem('github', 'https://ghe.example.com/x?', policy, { base: true })).toMatch(/query/);
    expect(endpointProblem('github', 'https://ghe.example.com/x?page=2', policy)).toBeNull();
    expect(endpointProblem('github', 'file:///etc/passwd', policy)).toMatch(/http or https/);
  });

  it.each([
    ['127.0.0.1', false],
    ['10.20.30.40', false],
    ['172.31.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['::ffff:127.0.0.1', false],
    ['fe80::1', false],
    ['fd12:3456::1', false],
    ['140.82.112.6', true],
    ['2606:50c0:8000::154', true],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

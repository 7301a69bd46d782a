import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { ConcurrencyError, ValidationError } from '../../src/errors.js';
import { toolFailure } from '../../src/mcp/toolResult.js';
import { McpServer } from '@modelcontextprotocol/server';
import { silentLogger } from '../../src/ports/logger.js';

const app = async () => {
  const instance = await buildApp({
    logger: pino({ level: 'silent' }),
    bodyLimitBytes: 1024,
    createMcpServer: () => new McpServer({ name: 't', version: '1' }),
    browsers: { allowedHosts: [], corsOrigins: [] },
    rateLimits: { toolsPerMinute: 100, mcpPerMinute: 100 },
  });
  instance.get('/conflict', () => {
    throw new ConcurrencyError('job-1', '3', '4');
  });
  instance.get('/invalid', () => {
    throw new ValidationError('limit: too big');
  });
  instance.get('/boom', () => {
    throw new Error('secret detail');
  });
  instance.post('/echo', (request) => request.body);
  return instance;
};

describe('HTTP error mapping', () => {
  it('maps a stale expected revision to 409', async () => {
    const response = await (await app()).inject({ method: 'GET', url: '/conflict' });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'conflict', message: "Stream 'job-1' is at revision 4, expected 3" },
    });
  });

  it('maps bad input to 400 and malformed JSON to bad_request', async () => {
    const instance = await app();
    expect((await instance.inject({ method: 'GET', url: '/invalid' })).statusCode).toBe(400);
    const malformed = await instance.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<{ error: { code: string } }>().error.code).toBe('bad_request');
  });

  it('refuses bodies over the limit with 413', async () => {
    const response = await (await app()).inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ text: 'x'.repeat(4096) }),
    });
    expect(response.statusCode).toBe(413);
  });

  it('hides unexpected errors behind a generic message with the request id', async () => {
    const response = await (await app()).inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'req-7' } });
    expect(response.statusCode).toBe(500);
    expect(response.headers['x-request-id']).toBe('req-7');
    expect(response.json<{ error: unknown }>().error).toEqual({ code: 'internal', message: 'Internal error (request id req-7)' });
    expect(response.body).not.toContain('secret detail');
  });

  it('answers unknown routes with not_found, readable by a localhost page', async () => {
    const response = await (await app()).inject({ method: 'GET', url: '/nope', headers: { origin: 'http://localhost:5173' } });
    expect(response.statusCode).toBe(404);
    expect(response.json<{ error: { code: string } }>().error.code).toBe('not_found');
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });
});

describe('MCP error mapping', () => {
  it('turns a concurrency conflict into an isError result with its code', () => {
    const result = toolFailure(new ConcurrencyError('job-1', '3', '4'), silentLogger, 'c-1');
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({
      error: { code: 'CONFLICT_ERROR', details: { streamId: 'job-1', expected: '3', actual: '4' } },
    });
  });

  it('masks unexpected errors', () => {
    const result = toolFailure(new Error('secret detail'), silentLogger, 'c-2');
    expect((result.content[0] as { text: string }).text).toBe(
      JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'Internal error (correlation id c-2)' } }),
    );
  });
});

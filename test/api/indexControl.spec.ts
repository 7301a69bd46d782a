import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo } from '../jobs/jobsSupport.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from './apiServer.js';

type Job = { job_id: string; repo_path: string; status: string };

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;

describe('index control over several targets', { timeout: 240_000 }, () => {
  let api: ApiServer;
  let token: string;
  let mcp: Client;
  const jobs = async (): Promise<Job[]> =>
    structured(await mcp.callTool({ name: 'list_background_jobs', arguments: { limit: 100 } })).jobs as Job[];
  const addConnector = async (body: Record<string, unknown>) => {
    const created = await api.call('POST', '/connectors', { token, body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  beforeAll(async () => {
    api = await startApiServer({ CTX_JOBS__MAX_CONCURRENT: '4' });
    token = api.token(ALL_SCOPES);
    mcp = new Client({ name: 'index-control-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
  });
  afterAll(async () => {
    await mcp?.close();
    await api?.close();
  });

  it('starts nothing when one target is not configured, over REST and MCP', async () => {
    await addConnector({ type: 'filesystem', name: 'small', config: { root: makeRepo(3) } });
    await addConnector({ type: 'slack', name: 'chat', config: { workspace: 'w', channels: ['dev'] } });

    const refused = await api.call('POST', '/index/start', { token, body: { connectors: ['small', 'chat'] } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'NOT_CONFIGURED' } });
    const forced = await api.call('POST', '/index/force-reindex', { token, body: { confirm_destructive: true } });
    expect(forced.body).toMatchObject({ error: { code: 'NOT_CONFIGURED' } });
    const viaMcp = await mcp.callTool({ name: 'context.index_control', arguments: { action: 'force_reindex' } });
    expect(viaMcp.isError).toBe(true);
    expect(JSON.stringify(viaMcp.content)).toContain('NOT_CONFIGURED');
    expect(await jobs()).toEqual([]);
  });

  it('starts nothing when one target is already being indexed, and answers `queued` as the REST API documents', async () => {
    const { body } = await api.call('GET', '/connectors', { token });
    for (const c of (body.connectors ?? body.items ?? []) as { id: string; name: string }[])
      if (c.name === 'chat') await api.call('DELETE', `/connectors/${c.id}`, { token });
    await addConnector({ type: 'filesystem', name: 'big', config: { root: makeRepo(400, 'big-') } });

    const first = await api.call('POST', '/index/start', { token, body: { connectors: ['big'] } });
    expect(first.status).toBe(202);
    expect(first.body.status).toBe('queued');
    const before = (await jobs()).map((j) => j.job_id);

    const everything = await api.call('POST', '/index/start', { token, body: {} });
    expect(everything.status).toBe(409);
    const forced = await api.call('POST', '/index/force-reindex', { token, body: { confirm_destructive: true } });
    expect(forced.status).toBe(409);
    expect((await jobs()).map((j) => j.job_id).sort()).toEqual([...before].sort());

    const stopped = await api.call('POST', '/index/stop', { token });
    expect(stopped.status).toBe(200);
    expect(stopped.body.jobs).toEqual([expect.objectContaining({ job_id: first.body.job_id, outcome: 'stopping' })]);
  });

  it('answers start_indexing_background with the status get_job_status then shows', async () => {
    for (let i = 0; i < 3; i++) {
      const started = structured(
        await mcp.callTool({ name: 'start_indexing_background', arguments: { repo_path: makeRepo(30, `agree${i}-`) } }),
      );
      const status = structured(await mcp.callTool({ name: 'get_job_status', arguments: { job_id: started.job_id } }));
      if (started.status === 'running') expect(status.status).not.toBe('pending');
      else expect(started.status).toBe('pending');
    }
  });
});

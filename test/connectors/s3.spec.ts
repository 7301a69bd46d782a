import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { describeWith, type Requirement } from '../support/requirements.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { eventsSince, itWithService, jobOutcome, LOOPBACK_SERVICES, startSync } from './syncSupport.js';

const MOTO_SERVER = process.env.CTX_TEST_MOTO;
const MOTO: Requirement = {
  available: Boolean(MOTO_SERVER && existsSync(MOTO_SERVER)),
  missing: "no moto S3 server (set CTX_TEST_MOTO to the moto_server of a venv with `pip install 'moto[server]'`; .ci/run installs one)",
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const sourceIdsOf = (events: StoredEvent[], type: string) =>
  events
    .filter((e) => e.type === type)
    .map((e) => (e.data as { sourceId?: string; documentId: string }).sourceId ?? (e.data as { documentId: string }).documentId)
    .sort();

describeWith(MOTO, 'S3 connector against a moto server', () => {
  let moto: ChildProcess;
  let endpoint: string;
  let s3: S3Client;
  let api: ApiServer;
  let token: string;
  let connectorId: string;
  const put = (key: string, body: string | Uint8Array) => s3.send(new PutObjectCommand({ Bucket: 'notes', Key: key, Body: body }));
  const documents = async (source = 's3:Team notes') => {
    const { items } = await api.ledger.readModels.find<{ id: string; sourceId: string }>('documents', {
      where: { project: 'acme', source },
      limit: 1000,
    });
    return new Map(items.map((d) => [d.sourceId, d]));
  };

  beforeAll(async () => {
    const port = await freePort();
    endpoint = `http://127.0.0.1:${port}`;
    moto = spawn(MOTO_SERVER!, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    for (;;) {
      const up = await fetch(endpoint).then(
        () => true,
        () => false,
      );
      if (up) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    await s3.send(new CreateBucketCommand({ Bucket: 'notes' }));
    await put('docs/deploy.md', '# Deploying\n\nRun the blue-green switch after the canary passes.');
    await put('docs/cache.txt', 'The widget cache expires after ten minutes.');
    await put('docs/logo.bin', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    // Not UTF-8: read as Windows-1252, as a file on disk is.
    await put('docs/menu.txt', Buffer.from('\x93Crème brûlée\x94 at the canteen', 'latin1'));
    await put('private/salaries.md', 'Outside the prefix: never synced.');
    // Secrets, passed over whatever the settings: they would be served to any reader of the index.
    await put('docs/.env', 'DATABASE_URL=postgres://app:hunter2@db/app\n');
    await put('docs/deploy-key.pem', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    api = await startApiServer(LOOPBACK_SERVICES);
    token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: {
        type: 's3',
        name: 'Team notes',
        config: { bucket: 'notes', prefix: 'docs/', endpoint, access_key_id: 'test', secret_access_key: 'test', page_size: 1 },
      },
    });
    expect(added.status).toBe(201);
    connectorId = added.body.id as string;
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    moto?.kill();
  });

  it('syncs the text objects under the prefix, page by page', async () => {
    const jobId = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, jobId)).status).toBe('completed');
    const synced = await documents();
    expect([...synced.keys()].sort()).toEqual(['docs/cache.txt', 'docs/deploy.md', 'docs/menu.txt']);
    expect(synced.get('docs/deploy.md')).toMatchObject({ sourceUrl: 's3://notes/docs/deploy.md', title: 'deploy.md' });
    const details = (await api.call('GET', `/connectors/${connectorId}`, { token })).body;
    expect(details).toMatchObject({ status: 'active', stats: { documents_indexed: 3, last_error: null } });
    const found = await api.call('POST', '/search', { token, body: { query: 'brûlée' } });
    expect((found.body.results as { metadata: { path: string } }[])[0]?.metadata.path).toBe('docs/menu.txt');
    expect((details.config as Record<string, unknown>).secret_access_key).toBe('***');
  }, 120_000);

  it('a second sync appends only changed objects and removes deleted ones', async () => {
    const before = await api.ledger.store.headPosition();
    await put('docs/cache.txt', 'The widget cache now expires after an hour.');
    await put('docs/rollback.md', '# Rolling back\n\nSwitch the router back to blue.');
    const deletedId = (await documents()).get('docs/deploy.md')!.id;
    await s3.send(new DeleteObjectCommand({ Bucket: 'notes', Key: 'docs/deploy.md' }));

    const jobId = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, jobId)).status).toBe('completed');
    const events = await eventsSince(api, before, 'doc');
    expect(sourceIdsOf(events, 'DocumentIngested')).toEqual(['docs/cache.txt', 'docs/rollback.md']);
    expect(sourceIdsOf(events, 'DocumentRemoved')).toEqual([deletedId]);
    const completed = (await eventsSince(api, before, 'connector')).filter((e) => e.type === 'ConnectorSyncCompleted');
    const cursor = (completed[0]?.data as { cursor: unknown } | undefined)?.cursor as { etags: Record<string, string> };
    expect(Object.keys(cursor.etags).sort()).toEqual([
      'docs/.env',
      'docs/cache.txt',
      'docs/deploy-key.pem',
      'docs/logo.bin',
      'docs/menu.txt',
      'docs/rollback.md',
    ]);

    const found = await api.call('POST', '/search', { token, body: { query: 'rolling back router' } });
    expect((found.body.results as { metadata: { path: string } }[])[0]?.metadata.path).toBe('docs/rollback.md');
  }, 120_000);

  it('an unknown bucket is a connector error, not a crash', async () => {
    const added = await api.call('POST', '/connectors', {
      token,
      body: { type: 's3', name: 'Missing', config: { bucket: 'nope', endpoint, access_key_id: 'test', secret_access_key: 'test' } },
    });
    const jobId = await startSync(api, token, added.body.id as string);
    expect(await jobOutcome(api, jobId)).toMatchObject({ status: 'failed', error_type: 'connector_access_denied' });
    const details = (await api.call('GET', `/connectors/${added.body.id as string}`, { token })).body;
    expect(details).toMatchObject({ status: 'error', stats: { last_error: 'S3 has no bucket nope (NoSuchBucket)' } });
  }, 120_000);
});

itWithService(['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'], 'S3 connector against the real service', async () => {
  const api = await startApiServer();
  try {
    const token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: {
        type: 's3',
        name: 'Real bucket',
        config: {
          bucket: process.env.S3_BUCKET,
          prefix: process.env.S3_PREFIX ?? '',
          region: process.env.S3_REGION ?? 'us-east-1',
          ...(process.env.S3_ENDPOINT ? { endpoint: process.env.S3_ENDPOINT } : {}),
          access_key_id: process.env.S3_ACCESS_KEY_ID,
          secret_access_key: process.env.S3_SECRET_ACCESS_KEY,
        },
      },
    });
    const outcome = await jobOutcome(api, await startSync(api, token, added.body.id as string));
    expect(outcome.status, outcome.error_message).toBe('completed');
  } finally {
    await api.close();
  }
});

import type { _Object } from '@aws-sdk/client-s3';
import {
  ConnectorAccessError,
  ConnectorServiceError,
  type RemoteItem,
  type RemoteSource,
  type SyncCursor,
} from '../../src/ports/remoteSource.js';
import type { EndpointPolicy } from '../../src/domain/connectorEndpoints.js';
import { checkRequest, connectorFailureIn, networkCodeIn, type ConnectorAgents } from './endpointGuard.js';
import { onFirstUse } from '../../src/engine/onFirstUse.js';
import { flag, optionalString, requiredString } from './settings.js';
import { secretFileByContent, secretFileByName } from './secretFiles.js';
import { decodeText, looksBinary } from './fileContent.js';

const MAX_OBJECT_BYTES = 1024 * 1024;

const ACCESS_ERRORS = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken']);

/** An error code as S3 names one (`NoSuchBucket`); anything else an answer says is left out. */
const CODE = /^[A-Za-z0-9.]{1,64}$/;

/** S3's answer as a connector error: its error code and HTTP status, never the message of its body. */
const translate = (error: unknown, bucket: string): Error => {
  const own = connectorFailureIn(error);
  if (own) return own;
  const name = (error as { name?: string }).name ?? '';
  const code = CODE.test(name) ? name : '';
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (ACCESS_ERRORS.has(code))
    return new ConnectorAccessError(`S3 refused access to bucket ${bucket} (${code}); check the connector's keys and their permissions`, { code });
  if (code === 'NoSuchBucket') return new ConnectorAccessError(`S3 has no bucket ${bucket} (NoSuchBucket)`, { code });
  if (status) return new ConnectorServiceError(`S3 request failed (HTTP ${status}${code ? `, ${code}` : ''})`, { status }, { cause: error });
  const network = networkCodeIn(error);
  return new ConnectorServiceError(`S3 could not be reached${network ? ` (${network})` : ''}`, undefined, { cause: error });
};

const etagsOf = (cursor: SyncCursor | null): Record<string, string> =>
  cursor && typeof cursor.etags === 'object' && cursor.etags !== null ? (cursor.etags as Record<string, string>) : {};

/** Text, not a binary, decoded as files read from disk are. */
const asText = (bytes: Uint8Array): string | null => (looksBinary(bytes) ? null : decodeText(bytes));

export interface S3SourceOptions {
  endpoints: EndpointPolicy;
  agents: ConnectorAgents;
}

/**
 * The text objects under a prefix of an S3 bucket (or an S3-compatible store). The cursor keeps the
 * ETag of every object seen, so a sync downloads only new and changed objects, and reports the
 * objects that are gone as deleted.
 */
export const createS3Source = (settings: Record<string, unknown>, { endpoints, agents }: S3SourceOptions): RemoteSource => {
  const bucket = requiredString(settings, 'bucket', 's3', 'the name of the bucket');
  const prefix = optionalString(settings, 'prefix') ?? '';
  const endpoint = optionalString(settings, 'endpoint');
  const accessKeyId = optionalString(settings, 'access_key_id');
  const secretAccessKey = optionalString(settings, 'secret_access_key');
  const connect = onFirstUse(() =>
    import('@aws-sdk/client-s3').then((sdk) => {
      const client = new sdk.S3Client({
        region: optionalString(settings, 'region') ?? 'us-east-1',
        ...(endpoint ? { endpoint } : {}),
        requestHandler: { httpAgent: agents.http, httpsAgent: agents.https },
        forcePathStyle: flag(settings, 'force_path_style', endpoint !== undefined),
        ...(accessKeyId && secretAccessKey
          ? { credentials: { accessKeyId, secretAccessKey, ...(optionalString(settings, 'session_token') ? { sessionToken: optionalString(settings, 'session_token')! } : {}) } }
          : {}),
      });
      // Wherever the endpoint comes from (the setting, or the region the SDK builds one from), each request is checked before it is sent.
      client.middlewareStack.add(
        (next) => (args) => {
          const { protocol, hostname, port } = args.request as { protocol?: string; hostname?: string; port?: number };
          checkRequest('s3', `${protocol ?? 'https:'}//${hostname ?? ''}${port ? `:${port}` : ''}/`, endpoints);
          return next(args);
        },
        { step: 'finalizeRequest', name: 'connectorEndpointCheck' },
      );
      return { sdk, client };
    }),
  );
  const pageSize = typeof settings.page_size === 'number' ? Math.min(1000, Math.max(1, settings.page_size)) : 1000;

  const download = async (object: _Object): Promise<RemoteItem | null> => {
    if ((object.Size ?? 0) > MAX_OBJECT_BYTES) return null;
    const { sdk, client } = await connect();
    const got = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: object.Key! }));
    const text = asText((await got.Body?.transformToByteArray()) ?? new Uint8Array());
    // Passed over as a binary is: an environment file or a private key would be served to any reader.
    if (text === null || secretFileByName(object.Key!) || secretFileByContent(text)) return null;
    const modified = (object.LastModified ?? new Date(0)).toISOString();
    const key = object.Key!;
    return {
      sourceId: key,
      title: key.slice(key.lastIndexOf('/') + 1),
      body: text,
      author: object.Owner?.DisplayName ?? null,
      createdAt: modified,
      updatedAt: modified,
      sourceUrl: `s3://${bucket}/${key}`,
      metadata: { bucket, key, etag: object.ETag ?? null, bytes: object.Size ?? 0 },
    };
  };

  return {
    async *changes(cursor) {
      const known = etagsOf(cursor);
      // Objects not listed yet keep their ETags until the listing ends: a resumed sync must not think them deleted.
      const etags: Record<string, string> = { ...known };
      const seen = new Set<string>();
      let token: string | undefined;
      try {
        const { sdk, client } = await connect();
        do {
          const listed = await client.send(
            new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: pageSize, FetchOwner: true, ...(token ? { ContinuationToken: token } : {}) }),
          );
          const items: RemoteItem[] = [];
          for (const object of listed.Contents ?? []) {
            if (!object.Key || object.Key.endsWith('/')) continue;
            seen.add(object.Key);
            const etag = object.ETag ?? '';
            if (known[object.Key] === etag) continue;
            const item = await download(object);
            if (item) items.push(item);
            etags[object.Key] = etag;
          }
          token = listed.IsTruncated ? listed.NextContinuationToken : undefined;
          const deleted = token ? [] : Object.keys(known).filter((key) => !seen.has(key));
          if (!token) for (const key of deleted) delete etags[key];
          yield { items, deleted, cursor: { etags: { ...etags } } };
        } while (token);
      } catch (error) {
        throw translate(error, bucket);
      }
    },
    liveIds: () => Promise.resolve(null),
  };
};

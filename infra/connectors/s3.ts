import { GetObjectCommand, ListObjectsV2Command, S3Client, type _Object } from '@aws-sdk/client-s3';
import {
  ConnectorAccessError,
  ConnectorServiceError,
  type RemoteItem,
  type RemoteSource,
  type SyncCursor,
} from '../../src/ports/remoteSource.js';
import { flag, optionalString, requiredString } from './settings.js';

const MAX_OBJECT_BYTES = 1024 * 1024;

const ACCESS_ERRORS = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken']);

const translate = (error: unknown, bucket: string): Error => {
  const name = (error as { name?: string }).name ?? '';
  const said = (error as Error).message;
  if (ACCESS_ERRORS.has(name))
    return new ConnectorAccessError(`S3 refused access to bucket ${bucket} (${name}: ${said}); check the connector's keys and their permissions`, { code: name });
  if (name === 'NoSuchBucket') return new ConnectorAccessError(`S3 has no bucket ${bucket} (NoSuchBucket)`, { code: name });
  return new ConnectorServiceError(`S3 request failed: ${name || said}`, undefined, { cause: error });
};

const etagsOf = (cursor: SyncCursor | null): Record<string, string> =>
  cursor && typeof cursor.etags === 'object' && cursor.etags !== null ? (cursor.etags as Record<string, string>) : {};

/** Text, not a binary: no NUL byte and valid UTF-8. */
const asText = (bytes: Uint8Array): string | null => {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
};

/**
 * The text objects under a prefix of an S3 bucket (or an S3-compatible store). The cursor keeps the
 * ETag of every object seen, so a sync downloads only new and changed objects, and reports the
 * objects that are gone as deleted.
 */
export const createS3Source = (settings: Record<string, unknown>): RemoteSource => {
  const bucket = requiredString(settings, 'bucket', 's3', 'the name of the bucket');
  const prefix = optionalString(settings, 'prefix') ?? '';
  const endpoint = optionalString(settings, 'endpoint');
  const accessKeyId = optionalString(settings, 'access_key_id');
  const secretAccessKey = optionalString(settings, 'secret_access_key');
  const client = new S3Client({
    region: optionalString(settings, 'region') ?? 'us-east-1',
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: flag(settings, 'force_path_style', endpoint !== undefined),
    ...(accessKeyId && secretAccessKey
      ? { credentials: { accessKeyId, secretAccessKey, ...(optionalString(settings, 'session_token') ? { sessionToken: optionalString(settings, 'session_token')! } : {}) } }
      : {}),
  });
  const pageSize = typeof settings.page_size === 'number' ? Math.min(1000, Math.max(1, settings.page_size)) : 1000;

  const download = async (object: _Object): Promise<RemoteItem | null> => {
    if ((object.Size ?? 0) > MAX_OBJECT_BYTES) return null;
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key! }));
    const text = asText((await got.Body?.transformToByteArray()) ?? new Uint8Array());
    if (text === null) return null;
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
        do {
          const listed = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: pageSize, FetchOwner: true, ...(token ? { ContinuationToken: token } : {}) }),
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

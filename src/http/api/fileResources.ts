import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import type { DocumentView } from '../../domain/documentView.js';
import { sourceTypeOf } from '../../../queries/searchWithWorkContext.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { ContentStore } from '../../ports/contentStore.js';
import type { ReadModels } from '../../ports/projections.js';

const PREFIX = 'engine://files/';
const PAGE_SIZE = 100;

/** A file's URI: its indexed path, each segment percent-encoded. */
export const fileUri = (path: string) => `${PREFIX}${path.split('/').map(encodeURIComponent).join('/')}`;

/**
 * The indexed path a URI names. Refused: `..` and `.` segments (also percent-encoded), absolute
 * paths, backslashes and NUL; a path is only ever looked up in the index, never on disk.
 */
export const pathOfUri = (uri: string): string => {
  if (!uri.startsWith(PREFIX)) throw new ValidationError(`Not a file resource: ${uri}`);
  const raw = uri.slice(PREFIX.length);
  let segments: string[];
  try {
    segments = raw.split('/').map(decodeURIComponent);
  } catch {
    throw new ValidationError('Malformed file path');
  }
  const path = segments.join('/');
  if (
    !path ||
    path.startsWith('/') ||
    /^[A-Za-z]:/.test(path) ||
    path.includes('\\') ||
    path.includes('\0')
  ) {
    throw new ValidationError(`Refused file path '${path}': paths are relative to the indexed project`);
  }
  if (segments.some((s) => s === '..' || s === '.' || s === ''))
    throw new ValidationError(`Refused file path '${path}': no '.', '..' or empty segments`);
  return path;
};

const encodeCursor = (offset: number) => Buffer.from(String(offset)).toString('base64url');
const decodeCursor = (cursor: string | undefined): number => {
  if (cursor === undefined) return 0;
  const offset = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Number.isInteger(offset) || offset < 0) throw new ValidationError('Invalid cursor');
  return offset;
};

const isListedFile = (doc: DocumentView) =>
  sourceTypeOf(doc.source) === 'file' && !doc.sourceId.startsWith('/') && !doc.sourceId.includes('..');

export interface FileResourceDeps {
  readModels: ReadModels;
  content: ContentStore;
}

/** The project's indexed files as `engine://files/{path}` resources: listed a page at a time, read from the index. */
export const registerFileResources = (
  server: McpServer,
  project: string,
  { readModels, content }: FileResourceDeps,
) => {
  server.registerResource(
    'files',
    new ResourceTemplate(`${PREFIX}{+path}`, { list: undefined }),
    {
      title: 'Indexed files',
      description: 'A file of the indexed project, by its path',
      mimeType: 'text/plain',
    },
    async (uri) => {
      const path = pathOfUri(uri.toString());
      const { items } = await readModels.find<DocumentView>('documents', {
        where: { project, sourceId: path },
        limit: 1,
      });
      const doc = items[0];
      if (!doc || !isListedFile(doc)) throw new NotFoundError(`No indexed file ${path}`);
      const body = (await content.get([doc.bodyHash])).get(doc.bodyHash) ?? '';
      return {
        contents: [{ uri: fileUri(doc.sourceId), mimeType: doc.contentType || 'text/plain', text: body }],
      };
    },
  );
  // The SDK lists template resources in one page; the index can hold far more files than that.
  server.server.setRequestHandler('resources/list', async (request) => {
    const offset = decodeCursor(request.params?.cursor);
    const { items, total } = await readModels.find<DocumentView>('documents', {
      where: { project },
      orderBy: [{ field: 'sourceId', direction: 'asc' }],
      limit: PAGE_SIZE,
      offset,
    });
    const resources = items.filter(isListedFile).map((doc) => ({
      uri: fileUri(doc.sourceId),
      name: doc.sourceId,
      title: doc.title ?? doc.sourceId,
      mimeType: doc.contentType || 'text/plain',
      size: doc.bodyBytes,
    }));
    const next = offset + PAGE_SIZE;
    return next < total ? { resources, nextCursor: encodeCursor(next) } : { resources };
  });
};

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

/** A directory's URI: its path with a trailing slash (the root: `engine://files/`). */
export const directoryUri = (path: string) => (path ? `${fileUri(path)}/` : PREFIX);

/**
 * The indexed path a URI names (a directory's may end with `/`; the root's is empty). Refused: `..`
 * and `.` segments (also percent-encoded), absolute paths, backslashes and NUL; a path is only
 * ever looked up in the index, never on disk.
 */
export const pathOfUri = (uri: string): string => {
  if (!uri.startsWith(PREFIX)) throw new ValidationError(`Not a file resource: ${uri}`);
  if (uri === PREFIX) return '';
  const raw = uri.slice(PREFIX.length).replace(/(?<=[^/])\/$/, '');
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

const isListedPath = (sourceId: string) => !sourceId.startsWith('/') && !sourceId.includes('..');
const isListedFile = (doc: DocumentView) => sourceTypeOf(doc.source) === 'file' && isListedPath(doc.sourceId);

/** The project's indexed file paths, read as counts per path (no document bodies). */
const filePaths = async (readModels: ReadModels, project: string): Promise<string[]> => {
  const sources = [...(await readModels.count('documents', 'source', { project })).keys()].filter(
    (source) => sourceTypeOf(source) === 'file',
  );
  const paths = await Promise.all(
    sources.map(async (source) => [...(await readModels.count('documents', 'sourceId', { project, source })).keys()]),
  );
  return paths.flat().filter(isListedPath);
};

/** A directory's entries, as a `text/uri-list`: its subdirectories (ending in `/`), then its files; null when it holds none. */
const directoryListing = (paths: readonly string[], directory: string): string | null => {
  const prefix = directory ? `${directory}/` : '';
  const directories = new Set<string>();
  const files = new Set<string>();
  for (const path of paths) {
    if (!path.startsWith(prefix)) continue;
    const [name, ...rest] = path.slice(prefix.length).split('/');
    if (!name) continue;
    (rest.length > 0 ? directories : files).add(`${prefix}${name}`);
  }
  if (directories.size + files.size === 0) return null;
  const sorted = (set: Set<string>) => [...set].sort();
  return [...sorted(directories).map(directoryUri), ...sorted(files).map(fileUri)].join('\r\n');
};

export interface FileResourceDeps {
  readModels: ReadModels;
  content: ContentStore;
}

/**
 * The project's indexed files as `engine://files/{path}` resources: listed a page at a time, read
 * from the index. A directory's URI (`engine://files/src/api`) reads as the list of its entries.
 */
export const registerFileResources = (
  server: McpServer,
  project: string,
  { readModels, content }: FileResourceDeps,
) => {
  const read = async (uri: URL) => {
    const path = pathOfUri(uri.toString());
    const { items } = path
      ? await readModels.find<DocumentView>('documents', { where: { project, sourceId: path }, limit: 1 })
      : { items: [] };
    const doc = items.find(isListedFile);
    if (!doc) {
      const listing = directoryListing(await filePaths(readModels, project), path);
      if (listing === null) throw new NotFoundError(`No indexed file ${path}`);
      return { contents: [{ uri: directoryUri(path), mimeType: 'text/uri-list', text: listing }] };
    }
    const body = (await content.get([doc.bodyHash])).get(doc.bodyHash) ?? '';
    return {
      contents: [{ uri: fileUri(doc.sourceId), mimeType: doc.contentType || 'text/plain', text: body }],
    };
  };
  server.registerResource(
    'files',
    new ResourceTemplate(`${PREFIX}{+path}`, { list: undefined }),
    {
      title: 'Indexed files',
      description: 'A file of the indexed project, by its path; a directory reads as the URIs of its entries',
      mimeType: 'text/plain',
    },
    read,
  );
  server.registerResource(
    'files-root',
    PREFIX,
    { title: 'Indexed project', description: 'The URIs of the top-level entries of the indexed project', mimeType: 'text/uri-list' },
    read,
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

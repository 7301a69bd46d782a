import { ResourceNotFoundError, ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import { documentIdOf } from '../../domain/documents.js';
import type { DocumentView } from '../../domain/documentView.js';
import { sourceTypeOf } from '../../domain/sourceTypes.js';
import { ValidationError } from '../../errors.js';
import type { ContentStore } from '../../ports/contentStore.js';
import type { ReadModels } from '../../ports/projections.js';

const PREFIX = 'engine://files/';
const PAGE_SIZE = 100;

/**
 * An indexed file: the source it was ingested from (a folder, a repository, a connector) and its id
 * there, a path (relative to where it was ingested from, or absolute when read from elsewhere).
 */
export interface IndexedFile {
  source: string;
  path: string;
}

/** A URI segment: percent-encoded, but for the `:` and `@` a path segment may hold as they are. */
const encodeSegment = (segment: string) => encodeURIComponent(segment).replace(/%3A/gi, ':').replace(/%40/g, '@');

/**
 * A file's URI: `engine://files/{source}/{path}`, the source one segment, the path's segments each
 * percent-encoded. The same path in two sources (two repositories) is two files, so two URIs. An
 * absolute path keeps its leading slash: `engine://files/filesystem//home/me/notes.md`.
 */
export const fileUri = ({ source, path }: IndexedFile) =>
  `${PREFIX}${encodeSegment(source)}/${path.split('/').map(encodeSegment).join('/')}`;

/**
 * A directory's URI: its path with a trailing slash (a source's top: `engine://files/{source}/`; the
 * top of its absolute paths: `engine://files/{source}//`; the root: `engine://files/`).
 */
export const directoryUri = (directory: IndexedFile | null) => {
  if (!directory) return PREFIX;
  const { source, path } = directory;
  return path ? `${fileUri({ source, path: path === '/' ? '' : path })}/` : `${PREFIX}${encodeSegment(source)}/`;
};

/**
 * The source and path a URI names (null for the root; a directory's path may end with `/`, a
 * source's top is the empty path). Refused: `..` and `.` segments (also percent-encoded), empty
 * segments but an absolute path's leading one, backslashes and NUL. A path is only ever looked up
 * in the index, never on disk.
 */
export const fileOfUri = (uri: string): IndexedFile | null => {
  if (!uri.startsWith(PREFIX)) throw new ValidationError(`Not a file resource: ${uri}`);
  if (uri === PREFIX) return null;
  const raw = uri.slice(PREFIX.length).replace(/\/$/, '');
  let segments: string[];
  try {
    segments = raw.split('/').map(decodeURIComponent);
  } catch {
    throw new ValidationError('Malformed file path');
  }
  const [source = '', ...rest] = segments;
  // `['']` is the top of the absolute paths (`engine://files/{source}//`).
  const path = rest.length === 1 && rest[0] === '' ? '/' : rest.join('/');
  if (!source) throw new ValidationError(`Refused file path '${raw}': the first segment names a source`);
  if ([source, path].some((part) => part.includes('\\') || part.includes('\0')))
    throw new ValidationError(`Refused file path '${path}': no backslashes or NUL`);
  if (rest.some((s, i) => s === '..' || s === '.' || (s === '' && i > 0)))
    throw new ValidationError(`Refused file path '${path}': no '.', '..' or empty segments`);
  return { source, path };
};

/** A path its URI names back: no empty, `.` or `..` segments but an absolute path's leading slash. */
const isListedPath = (path: string) =>
  path.split('/').every((s, i, all) => s !== '..' && s !== '.' && (s !== '' || (i === 0 && all.length > 1)));
const isFileSource = (source: string) => sourceTypeOf(source) === 'file';

/** The project's indexed files, read as counts per source and path (no document bodies). */
const indexedFiles = async (readModels: ReadModels, project: string): Promise<IndexedFile[]> => {
  const sources = [...(await readModels.count('documents', 'source', { project })).keys()].filter(isFileSource);
  const perSource = await Promise.all(
    sources.map(async (source) =>
      [...(await readModels.count('documents', 'sourceId', { project, source })).keys()]
        .filter(isListedPath)
        .map((path) => ({ source, path })),
    ),
  );
  return perSource.flat();
};

/** A folder of the tree the files make: its subfolders and files by name. */
interface Folder {
  folders: Map<string, Folder>;
  files: Set<string>;
}

const folder = (): Folder => ({ folders: new Map(), files: new Set() });

/** The tree of the files: the sources at the top, each a folder of its paths. */
const treeOf = (files: readonly IndexedFile[]) => {
  const root = folder();
  for (const { source, path } of files) {
    const names = namesOf({ source, path });
    let at = root;
    for (const name of names.slice(0, -1)) {
      if (!at.folders.has(name)) at.folders.set(name, folder());
      at = at.folders.get(name)!;
    }
    at.files.add(names.at(-1)!);
  }
  return root;
};

type Entry = { kind: 'directory' | 'file'; file: IndexedFile };

/** The entry at a path of names from the root: the source, then the path's segments. */
const entryAt = (kind: Entry['kind'], names: readonly string[]): Entry => ({
  kind,
  // The folder named '' under a source is the top of its absolute paths.
  file: { source: names[0]!, path: names.length === 2 && names[1] === '' ? '/' : names.slice(1).join('/') },
});
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A folder's entries (`names` leads to it): its subfolders, then its files, each sorted by name. */
const entriesOf = (at: Folder, names: readonly string[]): Entry[] => [
  ...[...at.folders.keys()].sort(byName).map((name) => entryAt('directory', [...names, name])),
  ...[...at.files].sort(byName).map((name) => entryAt('file', [...names, name])),
];

/** Every directory and file under a folder, in the order of its entries, each directory followed by what it holds. */
const walk = (at: Folder, names: readonly string[]): Entry[] => [
  ...[...at.folders.entries()]
    .sort(([a], [b]) => byName(a, b))
    .flatMap(([name, inside]) => [entryAt('directory', [...names, name]), ...walk(inside, [...names, name])]),
  ...[...at.files].sort(byName).map((name) => entryAt('file', [...names, name])),
];

/** The names leading to a source's path from the root. */
const namesOf = ({ source, path }: IndexedFile) => [source, ...(path === '/' ? [''] : path ? path.split('/') : [])];

/** The folder at a source's path, if the tree has one. */
const folderAt = (root: Folder, file: IndexedFile): Folder | undefined =>
  namesOf(file).reduce<Folder | undefined>((at, name) => at?.folders.get(name), root);

const uriOf = (entry: Entry) => (entry.kind === 'file' ? fileUri(entry.file) : directoryUri(entry.file));

const encodeCursor = (offset: number) => Buffer.from(String(offset)).toString('base64url');
const decodeCursor = (cursor: string | undefined): number => {
  if (cursor === undefined) return 0;
  const offset = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Number.isInteger(offset) || offset < 0) throw new ValidationError('Invalid cursor');
  return offset;
};

export interface FileResourceDeps {
  readModels: ReadModels;
  content: ContentStore;
}

/**
 * The project's indexed files as `engine://files/{source}/{path}` resources, and the directories
 * they make: listed a page at a time, read from the index. A directory's URI
 * (`engine://files/repo/src/api`) reads as the list of its entries; the root's lists the sources.
 */
export const registerFileResources = (server: McpServer, project: string, { readModels, content }: FileResourceDeps) => {
  const documentsOf = async (files: readonly IndexedFile[]) => {
    const ids = files.map((f) => documentIdOf(project, f.source, f.path));
    const found = await readModels.getMany<DocumentView>('documents', ids, { field: 'chunks', ids: [] });
    return files.map((_, i) => found.get(ids[i]!));
  };

  const read = async (uri: URL) => {
    const asked = uri.toString();
    const named = fileOfUri(asked);
    if (named && named.path && isFileSource(named.source) && !asked.endsWith('/')) {
      const [doc] = await documentsOf([named]);
      if (doc) {
        const body = (await content.get([doc.bodyHash])).get(doc.bodyHash) ?? '';
        return { contents: [{ uri: fileUri(named), mimeType: doc.contentType || 'text/plain', text: body }] };
      }
    }
    const root = treeOf(await indexedFiles(readModels, project));
    const at = named ? folderAt(root, named) : root;
    const entries = at ? entriesOf(at, named ? namesOf(named) : []) : [];
    if (entries.length === 0)
      throw new ResourceNotFoundError(asked, `No indexed file or directory ${named ? `${named.source}/${named.path}` : ''}`);
    return { contents: [{ uri: directoryUri(named), mimeType: 'text/uri-list', text: entries.map(uriOf).join('\r\n') }] };
  };

  server.registerResource(
    'files',
    new ResourceTemplate(`${PREFIX}{+path}`, { list: undefined }),
    {
      title: 'Indexed files',
      description:
        'A file of the indexed project, by its source and path (engine://files/{source}/{path}); a directory ' +
        'reads as the URIs of its entries',
      mimeType: 'text/plain',
    },
    read,
  );
  server.registerResource(
    'files-root',
    PREFIX,
    { title: 'Indexed project', description: 'The URIs of the indexed sources, each a directory', mimeType: 'text/uri-list' },
    read,
  );
  // Every directory and file, a page at a time: the index can hold far more than one page.
  server.server.setRequestHandler('resources/list', async (request) => {
    const offset = decodeCursor(request.params?.cursor);
    const all = walk(treeOf(await indexedFiles(readModels, project)), []);
    const page = all.slice(offset, offset + PAGE_SIZE);
    const files = page.filter((e) => e.kind === 'file').map((e) => e.file);
    const documents = new Map((await documentsOf(files)).map((doc, i) => [fileUri(files[i]!), doc]));
    const resources = page.map((entry) => {
      const uri = uriOf(entry);
      const { source, path } = entry.file;
      const name = entry.kind === 'file' || path === '/' ? `${source}/${path}` : `${source}/${path}${path ? '/' : ''}`;
      const doc = documents.get(uri);
      if (entry.kind === 'directory') return { uri, name, title: name, mimeType: 'text/uri-list' };
      return doc
        ? { uri, name, title: doc.title ?? name, mimeType: doc.contentType || 'text/plain', size: doc.bodyBytes }
        : { uri, name, mimeType: 'text/plain' };
    });
    const next = offset + PAGE_SIZE;
    return next < all.length ? { resources, nextCursor: encodeCursor(next) } : { resources };
  });
};

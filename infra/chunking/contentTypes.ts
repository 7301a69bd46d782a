import { basename, extname } from 'node:path';

/** Languages the code chunker knows; each maps to a grammar shipped by @vscode/tree-sitter-wasm. */
export type CodeLanguage =
  | 'typescript'
  | 'tsx'
  | 'javascript'
  | 'python'
  | 'go'
  | 'rust'
  | 'java'
  | 'csharp'
  | 'cpp'
  | 'c'
  | 'ruby'
  | 'php'
  | 'bash';

interface FileType {
  readonly contentType: string;
  readonly language: CodeLanguage | null;
}

const code = (contentType: string, language: CodeLanguage): FileType => ({ contentType, language });
const text = (contentType: string): FileType => ({ contentType, language: null });

const BY_EXTENSION: Readonly<Record<string, FileType>> = {
  '.md': text('text/markdown'),
  '.markdown': text('text/markdown'),
  '.mdx': text('text/markdown'),
  '.txt': text('text/plain'),
  '.text': text('text/plain'),
  '.log': text('text/plain'),
  '.rst': text('text/x-rst'),
  '.adoc': text('text/asciidoc'),
  '.ts': code('text/x-typescript', 'typescript'),
  '.mts': code('text/x-typescript', 'typescript'),
  '.cts': code('text/x-typescript', 'typescript'),
  '.tsx': code('text/x-tsx', 'tsx'),
  '.js': code('text/javascript', 'javascript'),
  '.mjs': code('text/javascript', 'javascript'),
  '.cjs': code('text/javascript', 'javascript'),
  '.jsx': code('text/jsx', 'javascript'),
  '.py': code('text/x-python', 'python'),
  '.pyi': code('text/x-python', 'python'),
  '.go': code('text/x-go', 'go'),
  '.rs': code('text/x-rust', 'rust'),
  '.java': code('text/x-java', 'java'),
  '.cs': code('text/x-csharp', 'csharp'),
  '.cpp': code('text/x-c++', 'cpp'),
  '.cc': code('text/x-c++', 'cpp'),
  '.cxx': code('text/x-c++', 'cpp'),
  '.hpp': code('text/x-c++', 'cpp'),
  '.hh': code('text/x-c++', 'cpp'),
  '.c': code('text/x-c', 'c'),
  '.h': code('text/x-c', 'c'),
  '.rb': code('text/x-ruby', 'ruby'),
  '.php': code('text/x-php', 'php'),
  '.sh': code('text/x-shellscript', 'bash'),
  '.bash': code('text/x-shellscript', 'bash'),
  '.css': text('text/css'),
  '.scss': text('text/x-scss'),
  '.html': text('text/html'),
  '.htm': text('text/html'),
  '.xml': text('application/xml'),
  '.svg': text('image/svg+xml'),
  '.json': text('application/json'),
  '.yaml': text('application/yaml'),
  '.yml': text('application/yaml'),
  '.toml': text('application/toml'),
  '.ini': text('text/x-ini'),
  '.csv': text('text/csv'),
  '.sql': text('application/sql'),
};

const LANGUAGE_BY_CONTENT_TYPE: ReadonlyMap<string, CodeLanguage> = new Map(
  Object.values(BY_EXTENSION).flatMap((type) =>
    type.language ? [[type.contentType, type.language] as const] : [],
  ),
);

const fileTypeOf = (path: string): FileType | undefined =>
  BY_EXTENSION[extname(basename(path)).toLowerCase()];

/** The content type of a file, judged by its extension; `text/plain` when the extension is unknown. */
export const detectContentType = (path: string): string => fileTypeOf(path)?.contentType ?? 'text/plain';

/** The programming language of a file, judged by its extension; null for prose and unknown files. */
export const languageOf = (path: string): CodeLanguage | null => fileTypeOf(path)?.language ?? null;

/** The media type without parameters, lower-cased: `Text/Markdown; charset=utf-8` → `text/markdown`. */
export const essenceOf = (contentType: string): string =>
  (contentType.split(';')[0] ?? '').trim().toLowerCase();

/** The language a content type denotes, or null when it is not a code type this module knows. */
export const languageOfContentType = (contentType: string): CodeLanguage | null =>
  LANGUAGE_BY_CONTENT_TYPE.get(essenceOf(contentType)) ?? null;

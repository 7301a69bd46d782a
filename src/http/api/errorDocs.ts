import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** Where `docs_url` of every REST error points: a section per code, on the server itself. */
export const ERROR_DOCS_PATH = '/docs/errors';

/** From source the page sits in `docs/`; a build (`dist/src/http/api`) reads the package's own `docs/`. */
const CANDIDATES = ['../../../docs/errors.md', '../../../../docs/errors.md'];

const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const inline = (text: string) => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/** The little Markdown docs/errors.md uses: `#` and `##` headings (the latter anchored by their text) and paragraphs. */
export const renderErrorDocs = (markdown: string): string => {
  const blocks = markdown.trim().split(/\n\s*\n/);
  const body = blocks
    .map((block) => {
      const heading = /^(#{1,2}) (.+)$/.exec(block.trim());
      if (!heading) return `<p>${inline(block.replace(/\s*\n\s*/g, ' '))}</p>`;
      const [, marks, text] = heading;
      return marks === '#' ? `<h1>${inline(text!)}</h1>` : `<h2 id="${escape(text!)}">${inline(text!)}</h2>`;
    })
    .join('\n');
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Context Ledger: REST API errors</title></head>\n<body>\n${body}\n</body></html>\n`;
};

const loadPage = (): string => {
  const file = CANDIDATES.map((candidate) => fileURLToPath(new URL(candidate, import.meta.url))).find((f) =>
    existsSync(f),
  );
  if (!file) throw new Error(`docs/errors.md is missing (looked in ${CANDIDATES.join(', ')})`);
  return renderErrorDocs(readFileSync(file, 'utf8'));
};

export const mountErrorDocs = (app: FastifyInstance): void => {
  const page = loadPage();
  app.get(ERROR_DOCS_PATH, (_request, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
      .send(page),
  );
};

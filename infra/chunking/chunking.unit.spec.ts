import { describe, expect, it } from 'vitest';
import { ChunkSchema, type Chunk } from '../../src/domain/documents.js';
import { chunkDocument, detectContentType, estimateTokens, languageOf } from './index.js';

const lines = (...rows: string[]): string => rows.join('\n') + '\n';

const outline = (chunks: readonly Chunk[]) =>
  chunks.map(({ kind, symbol, startLine, endLine }) => ({ kind, symbol, startLine, endLine }));

const expectEveryLineCovered = (body: string, chunks: readonly Chunk[]): void => {
  const rows = body.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
  const covered = new Set<number>();
  for (const chunk of chunks) {
    for (let line = chunk.startLine ?? 0; line <= (chunk.endLine ?? -1); line++) covered.add(line);
  }
  const missing = rows.map((_, row) => row + 1).filter((line) => !covered.has(line));
  expect(missing).toEqual([]);
};

const expectTextMatchesLines = (body: string, chunks: readonly Chunk[]): void => {
  const rows = body.replace(/\n$/, '').split('\n');
  for (const chunk of chunks) {
    expect(chunk.text).toBe(rows.slice((chunk.startLine ?? 1) - 1, chunk.endLine ?? 0).join('\n'));
  }
};

const paragraph = (words: number, seed: string): string =>
  Array.from({ length: words }, (_, index) => `${seed}${index}`).join(' ');

describe('markdown chunking', () => {
  const body = lines(
    'Preamble before any heading.',
    '',
    '# Guide',
    '',
    '## Install',
    '',
    'Run the installer.',
    '',
    '```sh',
    '# not a heading',
    '',
    'npm install',
    '```',
    '',
    '## Usage',
    'Call it.',
  );

  it('starts a chunk at every heading and names it by the heading trail', async () => {
    const chunks = await chunkDocument({ documentId: 'doc', contentType: 'text/markdown', body });
    expect(outline(chunks)).toEqual([
      { kind: 'section', symbol: null, startLine: 1, endLine: 2 },
      { kind: 'section', symbol: 'Guide > Install', startLine: 3, endLine: 14 },
      { kind: 'section', symbol: 'Guide > Usage', startLine: 15, endLine: 16 },
    ]);
    expect(chunks[1]?.text).toContain('# not a heading');
    expectTextMatchesLines(body, chunks);
  });

  it('packs the paragraphs of a long section into chunks within the budget', async () => {
    const long = lines('# Notes', '', paragraph(40, 'a'), '', paragraph(40, 'b'), '', paragraph(40, 'c'));
    const chunks = await chunkDocument(
      { documentId: 'doc', contentType: 'text/markdown', body: long },
      { maxTokens: 60 },
    );
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.symbol).toBe('Notes');
      expect(estimateTokens(chunk.text)).toBeLessThanOrEqual(60);
    }
    expect(chunks[0]?.text.startsWith('# Notes')).toBe(true);
    expectEveryLineCovered(long, chunks);
  });

  it('never splits a fenced code block at its blank lines', async () => {
    const fenced = lines(
      '# Code',
      '',
      'Intro.',
      '',
      '```',
      'one',
      '',
      'two',
      '',
      'three',
      '```',
      '',
      paragraph(60, 'p'),
    );
    const chunks = await chunkDocument(
      { documentId: 'doc', contentType: 'text/markdown', body: fenced },
      { maxTokens: 100 },
    );
    const withFence = chunks.filter((chunk) => chunk.text.includes('one'));
    expect(withFence).toHaveLength(1);
    expect(withFence[0]?.text).toContain('three');
  });

  it('repeats the tail of the previous window when it splits an oversized paragraph', async () => {
    const rows = Array.from({ length: 40 }, (_, index) => `line number ${index} of a single long paragraph`);
    const body = lines(...rows);
    const chunks = await chunkDocument(
      { documentId: 'doc', contentType: 'text/plain', body },
      { maxTokens: 60, overlapTokens: 15 },
    );
    expect(chunks.length).toBeGreaterThan(3);
    for (const [previous, next] of chunks
      .slice(0, -1)
      .map((chunk, index) => [chunk, chunks[index + 1]] as const)) {
      expect(next?.startLine).toBeLessThanOrEqual(previous.endLine ?? 0);
      expect(next?.startLine).toBeGreaterThan(previous.startLine ?? 0);
    }
    expect(chunks.every((chunk) => chunk.kind === 'text')).toBe(true);
    expectEveryLineCovered(body, chunks);
  });
});

describe('code chunking', () => {
  it('splits TypeScript into named declarations with their doc comments and line ranges', async () => {
    const body = lines(
      "import { join } from 'node:path';", // 1
      '',
      '/** Adds two numbers. */', // 3
      'export function add(x: number, y: number): number {',
      '  return x + y;',
      '}', // 6
      '',
      'export class Box {', // 8
      '  value = 1;',
      '  get(): number {',
      '    return this.value;',
      '  }',
      '}', // 13
      '',
      'const root = join("a", "b");', // 15
      'export const multiply = (a: number, b: number) => a * b;', // 16
      'export interface Shape {', // 17
      '  area(): number;',
      '}', // 19
      'export type Id = string;', // 20
      'export enum Color { Red }', // 21
    );
    const chunks = await chunkDocument({
      documentId: 'doc',
      path: 'src/math.ts',
      contentType: 'text/x-typescript',
      body,
    });
    expect(outline(chunks)).toEqual([
      { kind: 'lines', symbol: null, startLine: 1, endLine: 2 },
      { kind: 'function', symbol: 'add', startLine: 3, endLine: 7 },
      { kind: 'class', symbol: 'Box', startLine: 8, endLine: 14 },
      { kind: 'lines', symbol: null, startLine: 15, endLine: 15 },
      { kind: 'function', symbol: 'multiply', startLine: 16, endLine: 16 },
      { kind: 'interface', symbol: 'Shape', startLine: 17, endLine: 19 },
      { kind: 'type', symbol: 'Id', startLine: 20, endLine: 20 },
      { kind: 'enum', symbol: 'Color', startLine: 21, endLine: 21 },
    ]);
    expectTextMatchesLines(body, chunks);
  });

  it('splits a class over the budget into its methods', async () => {
    const method = (name: string) => [
      `  ${name}(input: string): string {`,
      `    const words = input.split(' ').map((word) => word.trim().toLowerCase());`,
      `    return words.filter((word) => word.length > 2).join('-');`,
      '  }',
    ];
    const body = lines(
      'export class Slugger {',
      '  private readonly cache = new Map<string, string>();',
      '',
      ...method('slug'),
      '',
      ...method('title'),
      '}',
    );
    const chunks = await chunkDocument(
      { documentId: 'doc', path: 'slug.ts', contentType: 'text/x-typescript', body },
      { maxTokens: 60 },
    );
    expect(outline(chunks)).toEqual([
      { kind: 'class', symbol: 'Slugger', startLine: 1, endLine: 3 },
      { kind: 'method', symbol: 'Slugger.slug', startLine: 4, endLine: 8 },
      { kind: 'method', symbol: 'Slugger.title', startLine: 9, endLine: 13 },
    ]);
  });

  it('splits Python into functions, decorated functions and classes', async () => {
    const body = lines(
      'import os', // 1
      '',
      '@cache', // 3
      'def load(path):',
      '    return open(path).read()', // 5
      '',
      'class Store(Base):', // 7
      '    """Keeps things."""',
      '    def get(self, key):',
      '        return self.items[key]', // 10
      '',
      "if __name__ == '__main__':", // 12
      '    load(os.getcwd())',
    );
    const chunks = await chunkDocument({
      documentId: 'doc',
      path: 'store.py',
      contentType: 'text/x-python',
      body,
    });
    expect(outline(chunks)).toEqual([
      { kind: 'lines', symbol: null, startLine: 1, endLine: 2 },
      { kind: 'function', symbol: 'load', startLine: 3, endLine: 6 },
      { kind: 'class', symbol: 'Store', startLine: 7, endLine: 11 },
      { kind: 'lines', symbol: null, startLine: 12, endLine: 13 },
    ]);
  });

  it('names Python methods after their class when the class is split', async () => {
    const body = lines(
      'class Store:',
      '    def get(self, key):',
      '        return self.items.get(key, self.default_value_for_missing_keys)',
      '',
      '    def put(self, key, value):',
      '        self.items[key] = value if value is not None else self.default_value',
    );
    const chunks = await chunkDocument(
      { documentId: 'doc', path: 'store.py', contentType: 'text/x-python', body },
      { maxTokens: 30 },
    );
    expect(outline(chunks)).toEqual([
      { kind: 'class', symbol: 'Store', startLine: 1, endLine: 1 },
      { kind: 'method', symbol: 'Store.get', startLine: 2, endLine: 4 },
      { kind: 'method', symbol: 'Store.put', startLine: 5, endLine: 6 },
    ]);
  });

  it('splits Go into functions, methods named by receiver, structs and interfaces', async () => {
    const body = lines(
      'package store', // 1
      '',
      'import "fmt"', // 3
      '',
      '// Store keeps items.', // 5
      'type Store struct {',
      '\titems map[string]string',
      '}', // 8
      '',
      'type Getter interface {', // 10
      '\tGet(key string) string',
      '}', // 12
      '',
      'func (s *Store) Get(key string) string {', // 14
      '\treturn s.items[key]',
      '}', // 16
      '',
      'func New() *Store {', // 18
      '\tfmt.Println("new")',
      '\treturn &Store{}',
      '}', // 21
    );
    const chunks = await chunkDocument({
      documentId: 'doc',
      path: 'store.go',
      contentType: 'text/x-go',
      body,
    });
    expect(outline(chunks)).toEqual([
      { kind: 'lines', symbol: null, startLine: 1, endLine: 4 },
      { kind: 'struct', symbol: 'Store', startLine: 5, endLine: 9 },
      { kind: 'interface', symbol: 'Getter', startLine: 10, endLine: 13 },
      { kind: 'method', symbol: 'Store.Get', startLine: 14, endLine: 17 },
      { kind: 'function', symbol: 'New', startLine: 18, endLine: 21 },
    ]);
  });

  it.each([
    [
      'lib.rs',
      'text/x-rust',
      lines(
        'use std::io;',
        'pub struct Point { x: i32 }',
        'impl Point {',
        '    fn norm(&self) -> i32 { self.x }',
        '}',
        'fn main() {}',
      ),
      [
        ['struct', 'Point'],
        ['impl', 'Point'],
        ['function', 'main'],
      ],
    ],
    [
      'App.java',
      'text/x-java',
      lines('package app;', 'public class App {', '  void run() {}', '}', 'interface Task {}'),
      [
        ['class', 'App'],
        ['interface', 'Task'],
      ],
    ],
    [
      'app.js',
      'text/javascript',
      lines(
        "const fs = require('fs');",
        'function read() {}',
        'class Reader {}',
        'module.exports = { read };',
      ),
      [
        ['function', 'read'],
        ['class', 'Reader'],
      ],
    ],
    [
      'view.tsx',
      'text/x-tsx',
      lines('export function View() {', '  return <div>hi</div>;', '}'),
      [['function', 'View']],
    ],
  ])('names the declarations of %s', async (path, contentType, body, symbols) => {
    const chunks = await chunkDocument({ documentId: 'doc', path, contentType, body });
    const named = chunks.filter((chunk) => chunk.kind !== 'lines').map((chunk) => [chunk.kind, chunk.symbol]);
    expect(named).toEqual(symbols);
    expectEveryLineCovered(body, chunks);
  });

  it('cuts a function over the budget into line windows that keep its name', async () => {
    const statements = Array.from(
      { length: 30 },
      (_, index) => `  const value${index} = compute(${index}, 'some argument');`,
    );
    const body = lines('export function huge(): void {', ...statements, '}');
    const chunks = await chunkDocument(
      { documentId: 'doc', path: 'huge.ts', contentType: 'text/x-typescript', body },
      { maxTokens: 64 },
    );
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((chunk) => chunk.kind === 'function' && chunk.symbol === 'huge')).toBe(true);
    expectEveryLineCovered(body, chunks);
  });

  it('falls back to line windows for a language it has no grammar for', async () => {
    const body = lines(...Array.from({ length: 50 }, (_, index) => `(define (f${index} x) (* x ${index}))`));
    const chunks = await chunkDocument(
      { documentId: 'doc', path: 'prog.scm', contentType: 'text/x-scheme', body },
      { maxTokens: 64 },
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((chunk) => chunk.kind === 'lines' && chunk.symbol === null)).toBe(true);
    for (const chunk of chunks) expect(estimateTokens(chunk.text)).toBeLessThanOrEqual(64);
    expectEveryLineCovered(body, chunks);
  });

  it('still covers every line of source that does not parse', async () => {
    const body = lines(
      'function broken( {',
      '  return ;;; }}}',
      'class {',
      'def x',
      '}',
      '',
      'export function fine() { return 1; }',
    );
    const chunks = await chunkDocument({
      documentId: 'doc',
      path: 'broken.ts',
      contentType: 'text/x-typescript',
      body,
    });
    expectEveryLineCovered(body, chunks);
  });
});

describe('chunk identity and shape', () => {
  const input = {
    documentId: 'doc-1',
    path: 'a.md',
    contentType: 'text/markdown',
    body: lines('# A', 'one', '# B', 'two'),
  };

  it('gives the same chunks and ids for the same input', async () => {
    const first = await chunkDocument(input);
    const second = await chunkDocument({ ...input });
    expect(second).toEqual(first);
    expect(new Set(first.map((chunk) => chunk.id)).size).toBe(first.length);
  });

  it('gives other ids to another document with the same text', async () => {
    const first = await chunkDocument(input);
    const other = await chunkDocument({ ...input, documentId: 'doc-2' });
    expect(other.map((chunk) => chunk.text)).toEqual(first.map((chunk) => chunk.text));
    expect(other.map((chunk) => chunk.id)).not.toEqual(first.map((chunk) => chunk.id));
  });

  it('produces chunks that satisfy the domain schema, indexed from zero', async () => {
    const chunks = await chunkDocument(input);
    chunks.forEach((chunk, index) => {
      expect(ChunkSchema.parse(chunk)).toEqual(chunk);
      expect(chunk.index).toBe(index);
    });
  });

  it('returns no chunks for an empty or blank document', async () => {
    expect(await chunkDocument({ documentId: 'd', contentType: 'text/plain', body: '' })).toEqual([]);
    expect(
      await chunkDocument({ documentId: 'd', contentType: 'text/x-python', path: 'a.py', body: '\n  \n' }),
    ).toEqual([]);
  });

  it('reads CRLF line endings as plain newlines', async () => {
    const chunks = await chunkDocument({
      documentId: 'd',
      path: 'a.py',
      contentType: 'text/x-python',
      body: 'def f():\r\n    pass\r\n',
    });
    expect(outline(chunks)).toEqual([{ kind: 'function', symbol: 'f', startLine: 1, endLine: 2 }]);
    expect(chunks[0]?.text).toBe('def f():\n    pass');
  });

  it('slices a single line longer than the budget', async () => {
    const body = 'x'.repeat(1000);
    const chunks = await chunkDocument(
      { documentId: 'd', path: 'min.js', contentType: 'text/javascript', body },
      { maxTokens: 100 },
    );
    expect(chunks.map((chunk) => chunk.text).join('')).toBe(body);
    expect(
      chunks.every((chunk) => chunk.startLine === 1 && chunk.endLine === 1 && chunk.text.length <= 400),
    ).toBe(true);
  });

  it('covers every line of mixed real-world documents', async () => {
    const documents = [
      { path: 'a.md', body: lines('', '', '# T', '', '', '## Empty', '## Full', 'text', '', '', '') },
      { path: 'b.ts', body: lines('', '', 'class A {', '}', '', '', '};', 'function f() {}', '', '') },
      { path: 'c.go', body: lines('package c', 'func A() {', '}', '', 'var x = 1') },
      { path: 'd.txt', body: lines('', 'a', '', '', 'b', '') },
    ];
    for (const { path, body } of documents) {
      const chunks = await chunkDocument(
        { documentId: 'd', path, contentType: detectContentType(path), body },
        { maxTokens: 8 },
      );
      expectEveryLineCovered(body, chunks);
    }
  });
});

describe('content types', () => {
  it.each([
    ['README.md', 'text/markdown', null],
    ['notes.txt', 'text/plain', null],
    ['src/a.ts', 'text/x-typescript', 'typescript'],
    ['src/View.TSX', 'text/x-tsx', 'tsx'],
    ['lib/x.mjs', 'text/javascript', 'javascript'],
    ['x.py', 'text/x-python', 'python'],
    ['main.go', 'text/x-go', 'go'],
    ['lib.rs', 'text/x-rust', 'rust'],
    ['App.java', 'text/x-java', 'java'],
    ['Makefile', 'text/plain', null],
  ])('detects %s as %s', (path, contentType, language) => {
    expect(detectContentType(path)).toBe(contentType);
    expect(languageOf(path)).toBe(language);
  });
});

import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';
import type { CodeLanguage } from './contentTypes.js';

/** Grammar file stems in @vscode/tree-sitter-wasm; C is parsed with the C++ grammar, a superset in practice. */
const GRAMMAR: Readonly<Record<CodeLanguage, string>> = {
  typescript: 'typescript',
  tsx: 'tsx',
  javascript: 'javascript',
  python: 'python',
  go: 'go',
  rust: 'rust',
  java: 'java',
  csharp: 'c-sharp',
  cpp: 'cpp',
  c: 'cpp',
  ruby: 'ruby',
  php: 'php',
  bash: 'bash',
};

const require = createRequire(import.meta.url);

// Initialising the runtime and compiling a grammar take tens of milliseconds; both happen once per
// process. A failure is cached as well, so a missing grammar costs nothing after the first try.
let runtime: Promise<void> | undefined;
const parsers = new Map<string, Promise<Parser>>();

/** The shared parser for a language. Parsing is synchronous, so one instance serves all callers. */
export const parserFor = (language: CodeLanguage): Promise<Parser> => {
  const grammar = GRAMMAR[language];
  let parser = parsers.get(grammar);
  if (!parser) {
    parser = createParser(grammar);
    parsers.set(grammar, parser);
  }
  return parser;
};

const createParser = async (grammar: string): Promise<Parser> => {
  runtime ??= Parser.init();
  await runtime;
  const language = await Language.load(
    require.resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${grammar}.wasm`),
  );
  return new Parser().setLanguage(language);
};

import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, finished, runBuilt, spawnBuilt, type Run } from '../support/builtCli.js';
import { modelEnv, tempDataDir } from '../support/ledger.js';
import { testModelDir } from '../support/requirements.js';
import { awaitOutput } from './cli/sessions.js';

/**
 * Every `ctx` command of README.md's ```sh blocks, run in order as written against the built
 * program, in one working folder and data directory: the README cannot promise what `ctx` does not do.
 */
const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

/** Lines of ```sh blocks, comments removed. */
const shLines = (markdown: string): string[] =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap(([, block]) =>
    block!
      .split('\n')
      .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
      .filter(Boolean),
  );

/** The `ctx` commands of a shell line (`npm install && npx ctx serve` holds one), without `npx`. */
const ctxCommands = (line: string): string[] =>
  line
    .split(/&&|;/)
    .map((part) => part.trim())
    .filter((part) => /^(npx )?ctx( |$)/.test(part))
    .map((part) => part.replace(/^npx /, ''));

/** Words as a POSIX shell splits them, for the quoting the README uses; a `<placeholder>` is one. */
const words = (command: string): string[] =>
  [...command.matchAll(/"([^"]*)"|'([^']*)'|(<[^>]*>|\S+)/g)].map(
    ([, double, single, bare]) => double ?? single ?? bare!,
  );

/** Lines that cannot run here, with the reason. */
const SKIP = new Map([
  ['ctx model fetch', 'downloads the model from the Hugging Face hub'],
  ['ctx model fetch --weights q8 --model-dir DIR', 'downloads the model from the Hugging Face hub'],
]);

/** How a placeholder is filled: from an earlier command's output (newest first), or by running one. */
type Finder = { from: RegExp } | { run: string[]; pick: (stdout: string) => string | undefined };
const PLACEHOLDERS: Record<string, Finder> = {
  '<document-id>': {
    run: ['search', 'tokens', '--json'],
    pick: (out) => (JSON.parse(out) as { results: { id: string }[] }).results[0]?.id,
  },
  '<key-id>': { from: /^key id: +(\S+)$/m },
  '<family-id>': { from: /^family: +(\S+)$/m },
  '<position>': { from: /^(\d+-\d+) /m },
  '<next cursor>': {
    run: ['audit', '--type', 'DocumentIngested', '--limit', '1', '--json'],
    pick: (out) => (JSON.parse(out) as { next_cursor: string | null }).next_cursor ?? undefined,
  },
};

/** Commands that need the data directory to themselves: the README says to stop the server first. */
const WITHOUT_SERVER = new Set(['backup', 'restore', 'migrate']);

/** Exit codes other than 0 that the README promises: none but semantic search without a model. */
const expectedCode = (args: readonly string[]): number =>
  !testModelDir && args.includes('--mode') && !args.includes('keyword') ? 2 : 0;

const FIXTURE = {
  'docs/auth.md':
    '# Access tokens\n\nTokens are refreshed with a refresh token shortly before they expire.\n',
  'docs/search.md': '# Search\n\nHybrid search fuses the keyword and semantic rankings.\n',
  'src/refresh.ts':
    'export const refreshTokens = (token: string): string => token.trim(); // how tokens are refreshed\n',
};

describe('README.md, run as written', () => {
  const commands = shLines(README).flatMap(ctxCommands);
  const cwd = tempDataDir('ctx-readme-');
  const env = {
    ...modelEnv(),
    // Any free port: the CLI finds the server through the data directory.
    CTX_SERVER__BIND: '127.0.0.1:0',
    CTX_AUTH__JWT_SECRET: 'a-secret-of-at-least-32-characters!',
  };
  const outputs: string[] = [];
  let server: { child: ChildProcess; ended: Promise<Run> } | undefined;

  const stopServer = async () => {
    if (!server) return;
    const { child, ended } = server;
    server = undefined;
    child.kill('SIGTERM');
    const run = await ended;
    expect(run.code, run.stderr).toBe(0);
  };

  const fill = async (arg: string): Promise<string> => {
    const finder = PLACEHOLDERS[arg];
    if (!arg.startsWith('<')) return arg;
    if (!finder) throw new Error(`no way to fill ${arg}: add it to PLACEHOLDERS`);
    if ('from' in finder) {
      const value = outputs.findLast((out) => finder.from.test(out))?.match(finder.from)?.[1];
      if (!value) throw new Error(`no earlier output holds ${arg}`);
      return value;
    }
    const run = await runBuilt(finder.run, { env, cwd });
    const value = run.code === 0 ? finder.pick(run.stdout) : undefined;
    if (!value) throw new Error(`ctx ${finder.run.join(' ')} gave no ${arg}: ${run.stdout}${run.stderr}`);
    return value;
  };

  beforeAll(async () => {
    await ensureBuilt();
    for (const [file, text] of Object.entries(FIXTURE)) {
      mkdirSync(path.dirname(path.join(cwd, file)), { recursive: true });
      writeFileSync(path.join(cwd, file), text);
    }
  }, 300_000);
  afterAll(stopServer);

  it('has ctx commands, and skips only lines it has', () => {
    expect(commands.length).toBeGreaterThan(10);
    for (const skipped of SKIP.keys()) expect(commands).toContain(skipped);
  });

  it('names ctx only in lines whose commands it runs or skips', () => {
    const stray = shLines(README).filter((line) => /\bctx\b/.test(line) && ctxCommands(line).length === 0);
    expect(stray).toEqual([]);
  });

  for (const command of commands) {
    const reason = SKIP.get(command);
    if (reason) {
      it.skip(`${command} (${reason})`, () => {});
      continue;
    }
    it(command, async () => {
      const args = await Promise.all(words(command).slice(1).map(fill));
      if (args[0] === 'serve') {
        await stopServer();
        const child = spawnBuilt(args, { env, cwd });
        server = { child, ended: finished(child) };
        await awaitOutput(child, /serving on http:\/\//);
        return;
      }
      if (WITHOUT_SERVER.has(args[0]!)) await stopServer();
      const run = await runBuilt(args, { env, cwd });
      outputs.push(run.stdout);
      expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(expectedCode(args));
    });
  }
});

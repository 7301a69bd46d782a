import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../support/ledger.js';
import { ensureBuilt, runBuilt, type RunOptions } from '../../support/builtCli.js';

/** One run of the built `ctx`. `{name}` in an argument is a value an earlier scenario saved. */
export interface Scenario {
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** 0 unless given. */
  code?: number;
  stdout?: RegExp;
  stderr?: RegExp;
  /** Values later scenarios use, read from this one's stdout. */
  save?: Record<string, (stdout: string) => string>;
  /** Runs the program itself (servers); the default runs it to its end and checks the above. */
  session?: (args: string[], options: Required<RunOptions>) => Promise<void>;
}

/**
 * Scenarios run in order in one working folder, whose `.ctx` is the data directory they share.
 * `files` are written there first.
 */
export interface Group {
  env?: NodeJS.ProcessEnv;
  files?: Record<string, string>;
  scenarios: Scenario[];
}

/** Keyword search only: no test here needs the model. */
const BASE_ENV = { CTX_EMBEDDINGS__PROVIDER: 'none' };

const fill = (arg: string, saved: Map<string, string>): string =>
  arg.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = saved.get(name);
    if (value === undefined) throw new Error(`no earlier scenario saved {${name}}`);
    return value;
  });

/** The scenario's title: the command line as a user would type it. */
export const title = ({ args }: Scenario): string => `ctx ${args.join(' ')}`;

export const runGroup = (name: string, group: Group): void => {
  describe(`ctx, built: ${name}`, () => {
    const saved = new Map<string, string>();
    const cwd = tempDataDir('ctx-e2e-');

    beforeAll(async () => {
      await ensureBuilt();
      for (const [file, text] of Object.entries(group.files ?? {})) {
        mkdirSync(path.dirname(path.join(cwd, file)), { recursive: true });
        writeFileSync(path.join(cwd, file), text);
      }
    }, 300_000);

    for (const scenario of group.scenarios) {
      it(title(scenario), async () => {
        const args = scenario.args.map((arg) => fill(arg, saved));
        const env = { ...BASE_ENV, ...group.env, ...scenario.env };
        if (scenario.session) return scenario.session(args, { env, cwd });
        const run = await runBuilt(args, { env, cwd });
        const shown = `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
        expect(run.code, shown).toBe(scenario.code ?? 0);
        if (scenario.stdout) expect(run.stdout, shown).toMatch(scenario.stdout);
        if (scenario.stderr) expect(run.stderr, shown).toMatch(scenario.stderr);
        for (const [key, read] of Object.entries(scenario.save ?? {})) saved.set(key, read(run.stdout));
      });
    }
  });
};

/** The command path a scenario runs (`annotations start`): its leading words that name commands. */
export const commandPath = (
  args: readonly string[],
  names: (path: string[]) => readonly string[],
): string[] => {
  const found: string[] = [];
  for (const arg of args) {
    if (!names(found).includes(arg)) break;
    found.push(arg);
  }
  return found;
};

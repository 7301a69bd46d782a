import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildCli } from '../../../src/cli/program.js';
import { commandPath } from './runGroup.js';
import { GROUPS } from './table.js';

const paths = (command: Command, prefix: string[] = []): string[][] =>
  command.commands.flatMap((sub) => [[...prefix, sub.name()], ...paths(sub, [...prefix, sub.name()])]);

const child = (program: Command, path: readonly string[]): Command | undefined =>
  path.reduce<Command | undefined>(
    (command, name) => command?.commands.find((sub) => sub.name() === name),
    program,
  );

describe('the built-CLI scenario table', () => {
  it('runs every command and subcommand of ctx', () => {
    const program = buildCli();
    const names = (path: readonly string[]) => child(program, path)?.commands.map((sub) => sub.name()) ?? [];
    const covered = new Set(
      Object.values(GROUPS).flatMap((group) =>
        group.scenarios.map((scenario) => commandPath(scenario.args, names).join(' ')),
      ),
    );
    const missing = paths(program)
      .map((path) => path.join(' '))
      .filter((path) => !covered.has(path));
    expect(missing, 'commands with no scenario in test/e2e/cli/table.ts').toEqual([]);
  });
});

/** The command names `--help` lists, in the order it lists them. */
const listed = (command: Command): string[] => {
  const help = command.helpInformation();
  const section = help.slice(help.indexOf('Commands:') + 'Commands:'.length);
  return [...section.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!);
};

describe('ctx --help', () => {
  it('lists every command by name, whichever module or operation declares it', () => {
    const program = buildCli();
    for (const command of [program, child(program, ['annotations'])!, child(program, ['jobs'])!]) {
      const names = listed(command).filter((name) => name !== 'help');
      expect(names.length, command.name()).toBeGreaterThan(1);
      expect(names, command.name()).toEqual([...names].sort());
    }
  });
});

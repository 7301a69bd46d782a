import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { ValidationError } from '../errors.js';
import type { WithLedger } from '../module.js';
import type { CliOption, CliPrint, CliText, CliVerb, OperationSurfaces } from '../operations.js';
import { fields, table } from './format.js';
import { printResult } from './output.js';

const valueAt = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), value);

/** Sets a dotted path, merging into objects already there. */
const setAt = (target: Record<string, unknown>, path: string, value: unknown) => {
  const keys = path.split('.');
  const last = keys.pop()!;
  let at = target;
  for (const key of keys) {
    const next = at[key];
    at = at[key] = next && typeof next === 'object' ? { ...(next) } : {};
  }
  at[last] = value && typeof value === 'object' && !Array.isArray(value) && at[last] && typeof at[last] === 'object'
    ? { ...(at[last]), ...value }
    : value;
};

/** A JSON file holds the value itself, or an object naming the field it fills (`{"config": {...}}` for `config`). */
const readJsonFile = (file: string, field: string): unknown => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ValidationError(`Cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  const name = field.split('.').at(-1)!;
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.keys(parsed).length === 1 && name in parsed)
    return (parsed as Record<string, unknown>)[name];
  return parsed;
};

const parsed = (text: unknown, parse: CliOption['parse'], field: string): unknown => {
  switch (parse) {
    case 'number': {
      const number = Number(text);
      if (Number.isNaN(number)) throw new ValidationError(`${field}: '${String(text)}' is not a number`);
      return number;
    }
    case 'json-file':
      return readJsonFile(text as string, field);
    case 'pairs':
      return Object.fromEntries((text as string[]).map((pair) => pair.split('=', 2)));
    default:
      return text;
  }
};

/** A value as one cell of text: lists joined, objects as JSON, nothing as empty. */
const scalarText = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : JSON.stringify(value);
};

const render = (text: CliText, value: unknown): unknown => {
  if (typeof text === 'function') return (text as (value: unknown) => string)(value);
  const only = /^\{([\w.]+)\}$/.exec(text);
  // A lone placeholder keeps its value: fields leaves out what is null.
  if (only) return valueAt(value, only[1]!);
  return text.replace(/\{([\w.]+)\}/g, (_, path: string) => {
    const found = valueAt(value, path);
    return scalarText(found);
  });
};

const cell = (text: CliText, row: unknown) => {
  const value = render(text, row);
  return Array.isArray(value) ? value.join(', ') : (value as string | number | boolean | null | undefined);
};

export const printText = (print: CliPrint, output: unknown): string => {
  if ('fields' in print)
    return fields(Object.fromEntries(Object.entries(print.fields).map(([label, text]) => [label, render(text, output)])));
  if ('table' in print) {
    const { rows, columns, empty, cursor } = print.table;
    const next = cursor ? valueAt(output, cursor) : null;
    return (
      table(
        Object.entries(columns).map(([header, text]) => ({ header, value: (row: unknown) => cell(text, row) })),
        (valueAt(output, rows) as unknown[] | undefined) ?? [],
        empty,
      ) + (next ? `\nMore: --cursor ${scalarText(next)}` : '')
    );
  }
  const line = render(print.line, output);
  return typeof line === 'string' ? line : JSON.stringify(line ?? '');
};

/** The command of these words, made (empty) when no module made it. */
const commandAt = (program: Command, words: readonly string[]): Command =>
  words.reduce((parent, word) => parent.commands.find((c) => c.name() === word) ?? parent.command(word), program);

const verbOf = (catalogue: readonly OperationSurfaces[], name: string): CliVerb | undefined =>
  catalogue.find((o) => o.name === name)?.cli;

/** One verb: its arguments and options fill the operation's input; it prints the result as declared, or as JSON. */
const mountVerb = (program: Command, name: string, verb: CliVerb, catalogue: readonly OperationSurfaces[], withLedger: WithLedger) => {
  const command = commandAt(program, verb.command.slice(0, -1)).command(verb.command.at(-1)!).description(verb.description);
  for (const argument of verb.arguments ?? [])
    command.argument(argument.optional ? `[${argument.name}]` : `<${argument.name}>`, argument.description);
  for (const option of verb.options ?? []) {
    const added = new Option(option.flags, option.description);
    if (option.parse === 'repeat' || option.parse === 'pairs')
      added.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    if (option.required) added.makeOptionMandatory();
    command.addOption(added);
  }
  command.option('--json', 'print JSON');
  command.action(async (...given: unknown[]) => {
    const self = given.at(-1) as Command;
    const options = self.opts<Record<string, unknown>>();
    const input: Record<string, unknown> = {};
    (verb.arguments ?? []).forEach((argument, i) => {
      if (given[i] !== undefined) setAt(input, argument.field, parsed(given[i], argument.parse, argument.field));
    });
    for (const option of verb.options ?? []) {
      const value = options[new Option(option.flags).attributeName()];
      if (value === undefined) continue;
      if (option.runs) {
        // Only the arguments go along: the other options belong to the verb's own operation.
        const only: Record<string, unknown> = {};
        (verb.arguments ?? []).forEach((argument) => {
          if (input[argument.field] !== undefined) only[argument.field] = input[argument.field];
        });
        setAt(only, option.field, parsed(value, option.parse, option.field));
        return run(option.runs, only, options.json as boolean | undefined, self);
      }
      setAt(input, option.field, parsed(value, option.parse, option.field));
    }
    return run(name, input, options.json as boolean | undefined, self);
  });

  const run = async (operation: string, input: unknown, json: boolean | undefined, self: Command) => {
    const ran = operation === name ? verb : (verbOf(catalogue, operation) ?? verb);
    const result = await withLedger(self, async (ledger) => {
      if (ran.catchUp) await ledger.catchUp(ran.catchUp === true ? undefined : ran.catchUp);
      return ledger.run(operation, input);
    });
    printResult(result, json, (value) => printText(ran.print, value));
  };
};

/** Every operation of the catalogue that declares a verb becomes a `ctx` command. */
export const mountVerbs = (program: Command, catalogue: readonly OperationSurfaces[], withLedger: WithLedger): void => {
  for (const { name, cli } of catalogue) if (cli) mountVerb(program, name, cli, catalogue, withLedger);
};

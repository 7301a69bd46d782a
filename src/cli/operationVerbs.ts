import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { AppError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import type { LedgerHandle, WithLedger } from '../module.js';
import { ScopeSchema, type Scope } from '../domain/auth.js';
import type { CliArgument, CliFollow, CliOption, CliOtherwise, CliPrint, CliText, CliVerb, OperationSurfaces } from '../operations.js';
import { compactPosition, isPosition } from '../domain/position.js';
import { jsonTextNestsDeeperThan, MAX_JSON_DEPTH } from '../domain/nesting.js';
import { fields, table } from './format.js';
import { printResult } from './output.js';
import { countJsonlLines, jsonlBatches, jsonlInputName, type JsonlBatch } from './jsonlBatches.js';
import { progressLine, rateAndEta, waitingText } from './progress.js';

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
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ValidationError(`Cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  // Measured before it is parsed, as JSON bodies and JSON lines are.
  if (jsonTextNestsDeeperThan(text, MAX_JSON_DEPTH))
    throw new ValidationError(`${file} is nested more than ${MAX_JSON_DEPTH} levels deep`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`Cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  const name = field.split('.').at(-1)!;
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.keys(parsed).length === 1 && name in parsed)
    return (parsed as Record<string, unknown>)[name];
  return parsed;
};

/** Scopes as written at a terminal: `search:read,index:read` or `'search:read index:read'`. */
const scopesOf = (text: string): Scope[] => {
  const scopes = text.split(/[\s,]+/).filter(Boolean);
  const bad = scopes.filter((s) => !ScopeSchema.safeParse(s).success);
  if (bad.length)
    throw new ValidationError(`Unknown scopes: ${bad.join(', ')} (known: ${ScopeSchema.options.join(', ')})`);
  return scopes as Scope[];
};

const parsed = (text: unknown, parse: CliArgument['parse'], field: string): unknown => {
  switch (parse) {
    case 'words':
      return (text as string[]).join(' ');
    case 'number': {
      const number = Number(text);
      if (Number.isNaN(number)) throw new ValidationError(`${field}: '${String(text)}' is not a number`);
      return number;
    }
    case 'json-file':
      return readJsonFile(text as string, field);
    case 'pairs':
      return Object.fromEntries((text as string[]).map((pair) => pair.split('=', 2)));
    case 'scopes':
      return scopesOf(text as string);
    case 'list':
      return [text as string | string[]].flat().flatMap((item) => item.split(',')).map((item) => item.trim()).filter(Boolean);
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
  if (typeof text === 'function') return text(value);
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
  if ('fields' in print) {
    const listed = fields(Object.fromEntries(Object.entries(print.fields).map(([label, text]) => [label, render(text, output)])));
    return print.above === undefined ? listed : `${String(render(print.above, output))}\n${listed}`;
  }
  if ('table' in print) {
    const { rows, columns, empty, cursor, more } = print.table;
    const next = cursor ? valueAt(output, cursor) : null;
    const hint = more ? more(output) : undefined;
    return (
      table(
        Object.entries(columns).map(([header, text]) => ({ header, value: (row: unknown) => cell(text, row) })),
        ((rows === undefined ? output : valueAt(output, rows)) as unknown[] | undefined) ?? [],
        empty,
      ) +
      // A ledger position as the table shows them, compact; `--cursor` takes it back either way.
      (next ? `\nMore: --cursor ${typeof next === 'string' && isPosition(next) ? compactPosition(next) : scalarText(next)}` : '') +
      (hint ? `\n${hint}` : '')
    );
  }
  const line = render(print.line, output);
  return typeof line === 'string' ? line : JSON.stringify(line ?? '');
};

/**
 * A write is stored once answered: an outage that keeps the indexes from applying it (a search
 * server down or refusing the ledger's key) must not read as the write lost.
 */
const afterStoring = (catchUp: Promise<void>): Promise<void> =>
  catchUp.catch((error: unknown) => {
    if (!(error instanceof UnavailableError)) throw error;
    throw new UnavailableError(`Stored; the indexes apply it once this is mended: ${error.message}`, { cause: error }, error.code);
  });

/** The read models a verb reads for this input: undefined for every one but the semantic index. */
const readModelsOf = (catchUp: NonNullable<CliVerb['catchUp']>, input: Record<string, unknown>): readonly string[] | undefined =>
  catchUp === true
    ? undefined
    : typeof catchUp === 'string'
      ? [catchUp]
      : typeof catchUp === 'function'
        ? catchUp(input)
        : catchUp;

const longFlag = (option: CliOption) => new Option(option.flags).long ?? option.flags;

const verbsOf = (cli: CliVerb | readonly CliVerb[] | undefined): readonly CliVerb[] =>
  cli === undefined ? [] : 'command' in cli ? [cli] : cli;

/** The command of these words, made (empty) when no module made it. */
const commandAt = (program: Command, words: readonly string[]): Command =>
  words.reduce((parent, word) => parent.commands.find((c) => c.name() === word) ?? parent.command(word), program);

const verbOf = (catalogue: readonly OperationSurfaces[], name: string): CliVerb | undefined =>
  verbsOf(catalogue.find((o) => o.name === name)?.cli)[0];

/** Every page of a paged operation, its items answered as one list. */
const everyPage = async (ledger: LedgerHandle, operation: string, input: Record<string, unknown>, pages: NonNullable<CliVerb['allPages']>) => {
  const items: unknown[] = [];
  let cursor: unknown;
  do {
    const page = await ledger.run(operation, { ...input, ...(cursor ? { [pages.input]: cursor } : {}) });
    items.push(...((valueAt(page, pages.items) as unknown[] | undefined) ?? []));
    cursor = valueAt(page, pages.cursor);
  } while (cursor);
  return { [pages.items]: items };
};

const POLL_MS = 250;
/** How often piped progress of batched work writes a line. */
const PIPED_PROGRESS_MS = 2_000;

/** Answers of batches as one: their lists joined, their other fields the last batch's. */
const mergeAnswer = (into: Record<string, unknown>, answer: Record<string, unknown>) => {
  for (const [key, value] of Object.entries(answer)) {
    const before = into[key];
    into[key] = Array.isArray(before) && Array.isArray(value) ? before.concat(value) : value;
  }
};

type Following = Omit<CliFollow, 'flags' | 'description'>;

const isNotFound = (error: unknown) => error instanceof AppError && error.code === 'NOT_FOUND_ERROR';
const isTooLarge = (error: unknown) => error instanceof AppError && error.code === 'PAYLOAD_TOO_LARGE_ERROR';
const isInvalid = (error: unknown): error is AppError => error instanceof AppError && error.code === 'VALIDATION_ERROR';

/**
 * A JSONL batch's refusal naming the file's lines for its items (`documents.3.body` is
 * `corpus.jsonl:1204: body`), and which lines it kept out: a batch is refused whole. A refusal
 * of no item in particular stays as it is.
 */
const atLines = (error: AppError, field: string, file: string, lines: readonly number[]) => {
  const lineOf = (index: string) => `${file}:${lines[Number(index)] ?? '?'}`;
  const message = error.message
    .replace(new RegExp(`\\b${field}\\.(\\d+)\\.`, 'g'), (_, index: string) => `${lineOf(index)}: `)
    .replace(new RegExp(`\\b${field}\\.(\\d+)\\b`, 'g'), (_, index: string) => lineOf(index));
  if (message === error.message) return error;
  const keptOut = lines.length === 1 ? `line ${lines[0]} is` : `lines ${lines[0]} to ${lines.at(-1)}, sent together, are`;
  return new ValidationError(`${message} (${keptOut} not stored: mend it and run this again to go on)`, error.details);
};

/** Polls until the work ends, showing its progress on one line; its last status is the verb's result. */
const follow = async (ledger: LedgerHandle, how: Following, started: Record<string, unknown>) => {
  if (!ledger.server) await ledger.startWork();
  const line = progressLine();
  for (;;) {
    const status = await ledger.run(how.operation, how.input(started));
    line.update(how.progress(status));
    if (how.done(status)) {
      line.done();
      return status;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
};

/** One verb: its arguments and options fill the operation's input; it prints the result as declared, or as JSON. */
const mountVerb = (program: Command, name: string, verb: CliVerb, catalogue: readonly OperationSurfaces[], withLedger: WithLedger) => {
  // A verb may be a group's own (`ctx jobs` beside `ctx jobs show`): the group's command is reused.
  const command = commandAt(program, verb.command).description(verb.description);
  for (const argument of verb.arguments ?? [])
    command.argument(
      argument.optional ? `[${argument.name}${argument.variadic ? '...' : ''}]` : `<${argument.name}${argument.variadic ? '...' : ''}>`,
      argument.description,
    );
  for (const option of verb.options ?? []) {
    const added = new Option(option.flags, option.description);
    if (option.parse === 'repeat' || option.parse === 'pairs')
      added.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    if (option.required) added.makeOptionMandatory();
    if (option.choices) added.choices(option.choices);
    if (option.default !== undefined) added.default(option.default);
    command.addOption(added);
  }
  if (verb.follow) command.option(verb.follow.flags, verb.follow.description);
  command.option('--json', 'print JSON');
  command.action(async (...given: unknown[]) => {
    const self = given.at(-1) as Command;
    const options = self.opts<Record<string, unknown>>();
    // A parent verb's `--json` takes the flag wherever it stands: `ctx jobs show ID --json` sets the parent's.
    const json = self.optsWithGlobals<{ json?: boolean }>().json;
    const input: Record<string, unknown> = {};
    (verb.arguments ?? []).forEach((argument, i) => {
      if (given[i] !== undefined) setAt(input, argument.field, parsed(given[i], argument.parse, argument.field));
    });
    const valueOf = (option: CliOption): unknown => options[new Option(option.flags).attributeName()];
    for (const option of verb.options ?? []) {
      const value = valueOf(option);
      if (value === undefined) continue;
      if (option.runs) {
        // Only the arguments and what it needs go along: the other options belong to the verb's own operation.
        const only: Record<string, unknown> = {};
        (verb.arguments ?? []).forEach((argument) => {
          if (input[argument.field] !== undefined) only[argument.field] = input[argument.field];
        });
        for (const field of option.needs ?? []) {
          const needed = (verb.options ?? []).find((o) => o.field === field)!;
          const neededValue = valueOf(needed);
          if (neededValue === undefined) throw new ValidationError(`${longFlag(option)} needs ${needed.flags}`);
          setAt(only, field, parsed(neededValue, needed.parse, field));
        }
        const own = verbOf(catalogue, option.runs) ?? { command: verb.command, description: verb.description, print: verb.print, ...option.shows };
        if (option.parse === 'jsonl-file') return runBatches(option.runs, own, only, option.field, value as string, json, self);
        setAt(only, option.field, parsed(value, option.parse, option.field));
        return run(option.runs, own, only, json, self);
      }
      setAt(input, option.field, option.value ?? parsed(value, option.parse, option.field));
    }
    if (verb.follow && options[new Option(verb.follow.flags).attributeName()]) return runFollowed(input, json, self, verb.follow);
    if (verb.otherwise) return runOrOtherwise(input, json, self, verb.otherwise);
    return run(name, verb, input, json, self);
  });

  const run = async (operation: string, ran: CliVerb, given: Record<string, unknown>, json: boolean | undefined, self: Command) => {
    const input = ran.prepare ? ran.prepare(given) : given;
    const result = await withLedger(self, async (ledger) => {
      const past = ran.asOfField !== undefined && input[ran.asOfField] !== undefined;
      if (ran.catchUp && !past) {
        const line = progressLine();
        await ledger.catchUp(readModelsOf(ran.catchUp, input), (waiting) => line.note(waitingText(waiting)));
        line.done();
      }
      if (ran.allPages) return everyPage(ledger, operation, input, ran.allPages);
      if (!ran.progress && !ran.settles) return ledger.run(operation, input);
      const line = progressLine();
      // A server reports no progress: the line says where the work runs until it answers.
      if (ledger.server) line.update(`running through ${ledger.server}…`);
      const shownProgress = ran.progress;
      const answer = await ledger.run(
        operation,
        input,
        shownProgress ? { onProgress: (progress) => line.update(shownProgress(progress, input)) } : {},
      );
      if (ran.settles) {
        line.update('indexing…');
        await afterStoring(ledger.catchUp(undefined, (waiting) => line.note(waitingText(waiting))));
      }
      line.done();
      return answer;
    });
    const shown = ran.shown ? ran.shown(result, input) : result;
    printResult(shown, json, (value) => printText(ran.print, value));
  };

  /**
   * Runs the operation once per batch of a JSONL file's lines, read as they are sent: a file of any
   * size stays within the operation's and the server's limits. Progress, with the time left when the
   * file could be counted, goes to stderr (a line every few seconds when piped). Each batch is stored
   * when answered, so a run stopped halfway resumes by running again: what is stored and unchanged
   * appends nothing.
   */
  const runBatches = async (
    operation: string,
    ran: CliVerb,
    given: Record<string, unknown>,
    field: string,
    file: string,
    json: boolean | undefined,
    self: Command,
  ) => {
    const total = await countJsonlLines(file);
    const notSent: number[] = [];
    let server: string | null = null;
    /** Lines passed over as too large for the server, said last, whether the load ended or stopped. */
    const reportNotSent = () => {
      if (notSent.length === 0) return;
      process.exitCode = 1;
      process.stderr.write(
        `ctx: not sent: ${notSent.map((number) => `${jsonlInputName(file)}:${number}`).join(', ')}: ` +
          `${notSent.length === 1 ? 'a line' : 'each line'} larger than the server at ${server} takes in one request ` +
          '(server.body_limit_bytes). Raise that setting, or stop the server and run this again: documents already ' +
          'stored are not stored twice.\n',
      );
    };
    const loaded = withLedger(self, async (ledger) => {
      server = ledger.server;
      const line = progressLine({ pipedEveryMs: PIPED_PROGRESS_MS });
      const shownProgress = ran.progress;
      const started = Date.now();
      const answers: Record<string, unknown> = {};
      /** Sends a batch; one a server refuses as too large goes again in halves, and a line refused alone is passed over. */
      const send = async ({ values, lines }: JsonlBatch): Promise<void> => {
        const input = { ...given };
        setAt(input, field, values);
        try {
          mergeAnswer(answers, await ledger.run(operation, ran.prepare ? ran.prepare(input) : input));
        } catch (error) {
          if (isInvalid(error)) throw atLines(error, field, jsonlInputName(file), lines);
          if (!isTooLarge(error)) throw error;
          if (values.length === 1) return void notSent.push(...lines);
          const half = Math.ceil(values.length / 2);
          await send({ values: values.slice(0, half), lines: lines.slice(0, half) });
          await send({ values: values.slice(half), lines: lines.slice(half) });
        }
      };
      let done = 0;
      for await (const batch of jsonlBatches(file)) {
        await send(batch);
        done += batch.values.length;
        const progress = { done, total };
        const shown = shownProgress ? shownProgress(progress, given) : `${done}${total === null ? '' : `/${total}`}`;
        line.update(`${shown}${rateAndEta(done, total, started)}`);
      }
      if (ran.settles) {
        line.update('indexing…');
        await afterStoring(ledger.catchUp());
      }
      line.done();
      return answers;
    });
    const answers = await loaded.catch((error: unknown) => {
      reportNotSent();
      throw error;
    });
    const shown = ran.shown ? ran.shown(answers, given) : answers;
    printResult(shown, json, (value) => printText(ran.print, value));
    reportNotSent();
  };

  const runFollowed = async (given: Record<string, unknown>, json: boolean | undefined, self: Command, how: CliFollow) => {
    const input = verb.prepare ? verb.prepare(given) : given;
    const ran = await withLedger(self, async (ledger) => {
      const answer = await ledger.run(name, input);
      return { answer, status: await follow(ledger, how, answer) };
    });
    printFollowed(how, ran.status, ran.answer, json);
  };

  /** Runs the verb's operation; when it does not know the name given, the other one, following the work that one starts. */
  const runOrOtherwise = async (given: Record<string, unknown>, json: boolean | undefined, self: Command, otherwise: CliOtherwise) => {
    const input = verb.prepare ? verb.prepare(given) : given;
    const ran = await withLedger(self, async (ledger) => {
      try {
        return { own: await ledger.run(name, input) };
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      const answer = await ledger
        .run(otherwise.operation, otherwise.input(input))
        .catch((error: unknown) => {
          throw isNotFound(error) ? new NotFoundError(otherwise.notFound(input)) : error;
        });
      return { answer, status: await follow(ledger, otherwise.follow, answer) };
    });
    if ('own' in ran) printResult(ran.own, json, (value) => printText(verb.print, value));
    else printFollowed(otherwise.follow, ran.status, ran.answer, json);
  };
};

/** Prints how followed work ended; an ending that is not a success makes the exit code 1. */
const printFollowed = (
  how: Following,
  status: Record<string, unknown>,
  started: Record<string, unknown>,
  json: boolean | undefined,
) => {
  const shown = how.shown ? how.shown(status, started) : status;
  printResult(shown, json, (value) => printText(how.print, value));
  if (how.failed(status)) process.exitCode = 1;
};

/** Every operation of the catalogue that declares a verb becomes a `ctx` command. */
export const mountVerbs = (program: Command, catalogue: readonly OperationSurfaces[], withLedger: WithLedger): void => {
  for (const { name, cli } of catalogue) for (const verb of verbsOf(cli)) mountVerb(program, name, verb, catalogue, withLedger);
};

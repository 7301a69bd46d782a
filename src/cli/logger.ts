import { pino, type Level, type Logger } from 'pino';
import { forTerminal } from './terminalText.js';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const COLORS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '31' };
/** Fields every line has, or that the line's text already says. */
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

const value = (v: unknown) => (typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v));

/** One pino JSON line as a line for people: `12:04:31 INFO  message key=value`, an error's stack below it. */
export const formatLogLine = (line: string, color = false): string => {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = Number(record.level);
  const name = (LEVELS[level] ?? String(level)).padEnd(5);
  const time = new Date(Number(record.time)).toTimeString().slice(0, 8);
  const msg = typeof record.msg === 'string' ? record.msg : '';
  const extra = Object.entries(record)
    .filter(([key, v]) => !OMITTED.has(key) && !(typeof v === 'string' && msg.includes(v)))
    .map(([key, v]) => `${key}=${value(v)}`);
  const err = record.err as { stack?: string; message?: string } | undefined;
  const stack = err ? `\n    ${(err.stack ?? err.message ?? '').split('\n').join('\n    ')}` : '';
  const label = color ? `\x1b[${COLORS[level] ?? '0'}m${name}\x1b[0m` : name;
  // What a line says may come from a request or a document: never a control sequence of its own.
  return `${time} ${label} ${forTerminal(`${msg}${extra.length ? `  ${extra.join(' ')}` : ''}${stack}`)}\n`;
};

/** Logs to `fd` (1 or 2): lines for people on a terminal, JSON lines for machines otherwise. */
export const cliLogger = (level: Level | 'silent', fd: 1 | 2): Logger => {
  const out = fd === 1 ? process.stdout : process.stderr;
  if (!out.isTTY) return pino({ level }, pino.destination({ fd, sync: true }));
  return pino({ level }, { write: (line: string) => out.write(formatLogLine(line, true)) });
};

import { describe, expect, it } from 'vitest';
import { formatLogLine } from './logger.js';

const at = (hours: number, minutes: number) => new Date(2026, 0, 2, hours, minutes, 5).getTime();

describe('log lines on a terminal', () => {
  it('shows time, level and message, then the fields the message does not already say', () => {
    const line = JSON.stringify({
      level: 30,
      time: at(9, 4),
      pid: 1,
      hostname: 'h',
      url: 'http://127.0.0.1:7331',
      port: 7331,
      msg: 'Context Ledger is serving on http://127.0.0.1:7331',
    });
    expect(formatLogLine(line)).toBe(
      '09:04:05 INFO  Context Ledger is serving on http://127.0.0.1:7331  port=7331\n',
    );
  });

  it("puts an error's stack under its line", () => {
    const line = JSON.stringify({
      level: 50,
      time: at(23, 59),
      msg: 'automatic rebuild failed',
      projection: 'keyword',
      err: { message: 'boom', stack: 'Error: boom\n    at x' },
    });
    expect(formatLogLine(line)).toBe(
      '23:59:05 ERROR automatic rebuild failed  projection=keyword\n    Error: boom\n        at x\n',
    );
  });

  it('escapes control sequences a message or a field carries, and keeps its own colour', () => {
    const line = JSON.stringify({ level: 40, time: at(8, 0), msg: 'skipped \u001b[2J', source: 'a\u001b]0;x\u0007' });
    expect(formatLogLine(line, true)).toBe('08:00:05 \u001b[33mWARN \u001b[0m skipped \\u001b[2J  source=a\\u001b]0;x\\u0007\n');
  });

  it('passes a line that is not JSON through', () => {
    expect(formatLogLine('plain\n')).toBe('plain\n');
  });
});

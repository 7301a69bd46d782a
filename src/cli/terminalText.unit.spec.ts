import { describe, expect, it } from 'vitest';
import { forTerminal, onOneLine } from './terminalText.js';

describe('text written to a terminal', () => {
  it('escapes control sequences, and keeps lines (LF or CRLF) and tabs', () => {
    expect(forTerminal('a\u001b[2Jb\u009b1m\u0007')).toBe('a\\u001b[2Jb\\u009b1m\\u0007');
    expect(forTerminal('one\r\ntwo\n\tthree')).toBe('one\r\ntwo\n\tthree');
    // A carriage return alone would write over the line printed before it.
    expect(forTerminal('safe\rforged')).toBe('safe\\u000dforged');
  });

  it('on one line, escapes line breaks and tabs too', () => {
    expect(onOneLine('a\r\nb\tc')).toBe('a\\u000d\\u000ab\\u0009c');
  });
});

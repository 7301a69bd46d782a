/**
 * What the ledger holds came from files, connectors and agents: a title, a snippet, a file's name
 * may carry terminal control sequences. Written as they are, they could retitle or clear the
 * terminal, rewrite lines already printed, or set the clipboard. So every control character but a
 * newline (CRLF too) and a tab is written as its escape (`\u001b`): in text, plainly visible; in JSON, which
 * leaves DEL and the C1 controls raw, the same value.
 */
// eslint-disable-next-line no-control-regex -- control characters are what they find; a CR ending a line (CRLF) is kept
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_AND_BREAKS = /[\u0000-\u001f\u007f-\u009f]/g;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

export const forTerminal = (text: string): string => text.replace(CONTROLS, escaped);

/** The same, on one line: a table's cell (a file named with a newline) escapes newlines and tabs too. */
export const onOneLine = (text: string): string => text.replace(CONTROLS_AND_BREAKS, escaped);

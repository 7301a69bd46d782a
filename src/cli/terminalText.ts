/**
 * What the ledger holds came from files, connectors and agents: a title, a snippet, a file's name
 * may carry terminal control sequences. Written as they are, they could retitle or clear the
 * terminal, rewrite lines already printed, or set the clipboard. So every control character but a
 * newline and a tab is written as its escape (`\u001b`): in text, plainly visible; in JSON, which
 * leaves DEL and the C1 controls raw, the same value.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export const forTerminal = (text: string): string =>
  text.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

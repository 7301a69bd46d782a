/**
 * How deep JSON nests, counted without recursion, so that input nested deeper than any parser's
 * or walker's stack is measured (and refused) rather than overflowing it.
 */

/** How deep JSON input may nest, on every surface: far more than any input takes, far less than a parser's or walker's stack. */
export const MAX_JSON_DEPTH = 64;

/** Whether JSON text nests arrays and objects deeper than `max`; brackets inside strings do not count. */
export const jsonTextNestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
};

/** Whether a value nests arrays and objects deeper than `max` (the value itself is level 1). */
export const valueNestsDeeperThan = (value: unknown, max: number): boolean => {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (!item || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
};

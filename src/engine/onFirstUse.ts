/**
 * `load` run once, when first asked for, its promise kept. What only some processes use (a service's
 * client library, the MCP SDK) is then loaded by those, not by every `ctx` command.
 */
export const onFirstUse = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
};

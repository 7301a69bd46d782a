/**
 * `load` run once, when first asked for. A service's client library is loaded by the first sync of
 * a connector of its kind, not by every process: the AWS SDK alone takes a quarter of a second.
 */
export const onFirstUse = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
};

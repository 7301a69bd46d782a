import { createServer } from 'node:net';
import { IllegalStateError } from '../errors.js';

const inUse = (bind: string) =>
  new IllegalStateError(
    `${bind} is in use by another program (another ctx serve?): stop it, or listen elsewhere with --bind 127.0.0.1:PORT or [server] bind in ctx.toml`,
  );

/**
 * Resolves when `host:port` can be listened on, so that `ctx serve` on a taken port says so before it
 * opens or creates anything; throws a clear error when another program holds it.
 */
export const ensureFreeAddress = (bind: string): Promise<void> => {
  const separator = bind.lastIndexOf(':');
  const host = bind.slice(0, separator).replace(/^\[(.*)\]$/, '$1');
  const port = Number(bind.slice(separator + 1));
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? inUse(bind) : error));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
};

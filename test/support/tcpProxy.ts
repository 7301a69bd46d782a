import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay between a client and a real server, for tests of what happens when the network
 * between them fails: `cut()` drops every open connection and refuses new ones, `restore()` accepts
 * them again on the same port.
 */
export interface TcpProxy {
  readonly port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

const listen = (server: Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });

export const startTcpProxy = async (target: { host: string; port: number }): Promise<TcpProxy> => {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const relay = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  let server = createServer(relay);
  const port = await listen(server, 0);
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return {
    port,
    cut: stop,
    restore: async () => {
      if (server.listening) return;
      server = createServer(relay);
      await listen(server, port);
    },
    close: stop,
  };
};

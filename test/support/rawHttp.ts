import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

/**
 * One request from another process's point of view: the path goes on the wire exactly as written
 * (`/%74ools/ingest` stays encoded, as with `curl --path-as-is`) and every header, Host included,
 * is the caller's to forge.
 */
export const rawRequest = (
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | object; localAddress?: string } = {},
): Promise<RawResponse> => {
  const { hostname, port } = new URL(baseUrl);
  const body = typeof options.body === 'object' ? JSON.stringify(options.body) : options.body;
  const headers: Record<string, string> = {
    host: `${hostname}:${port}`,
    ...(typeof options.body === 'object' ? { 'content-type': 'application/json' } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const sent = request({ hostname, port, method, path, headers, agent: false, localAddress: options.localAddress }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text,
          json: <T>() => JSON.parse(text) as T,
        });
      });
    });
    sent.on('error', reject);
    sent.end(body);
  });
};

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { LedgerModule } from '../module.js';

/**
 * From source the assets sit in `src/http/admin`; a build (`dist/src/modules`) compiles only the
 * TypeScript, so it reads them from the package's own `src/http/admin`.
 */
const ASSET_DIRS = ['../http/admin/', '../../../src/http/admin/'];

const ASSETS = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
} as const;
type AssetName = keyof typeof ASSETS;

/** The page holds no data and runs only its own script and styles; every datum comes from /api/v1. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const assetDir = (): URL => {
  const found = ASSET_DIRS.map((dir) => new URL(dir, import.meta.url)).find((dir) =>
    existsSync(fileURLToPath(new URL('index.html', dir))),
  );
  if (!found) throw new Error(`The admin console's files are missing (looked in ${ASSET_DIRS.join(', ')})`);
  return found;
};

const loadAssets = (): Record<AssetName, string> => {
  const dir = assetDir();
  const read = (name: AssetName) => readFileSync(new URL(name, dir), 'utf8');
  return {
    'index.html': read('index.html'),
    'console.js': read('console.js'),
    'console.css': read('console.css'),
  };
};

const mountConsole = (app: FastifyInstance, assets: Record<AssetName, string>) => {
  const send = (reply: FastifyReply, name: AssetName) =>
    reply
      .header('content-type', ASSETS[name])
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .send(assets[name]);
  // A browser opening the server's address finds the console; an MCP client pointed at `/` asks for
  // an event stream there, which this server does not offer (405, as MCP's transport allows).
  app.get('/', (request, reply) =>
    (request.headers.accept ?? '').includes('text/event-stream')
      ? reply.status(405).header('allow', 'POST').send()
      : reply.redirect('/admin', 302),
  );
  app.get('/admin', (_request, reply) => send(reply, 'index.html'));
  app.get('/admin/', (_request, reply) => send(reply, 'index.html'));
  app.get('/admin/console.js', (_request, reply) => send(reply, 'console.js'));
  app.get('/admin/console.css', (_request, reply) => send(reply, 'console.css'));
};

/**
 * The admin console at /admin: a page, one script and one stylesheet. The shell needs no
 * credentials; the script asks for them when the admin-scoped API answers 401 or 403.
 */
export const consoleModule: LedgerModule = {
  name: 'console',
  setup: () => {
    const assets = loadAssets();
    return Promise.resolve({ routes: (app) => mountConsole(app, assets) });
  },
};

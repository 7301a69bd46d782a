import path from 'node:path';
import { isProof, newSecret } from '../../infra/crypto/serverProof.js';
import type { Config } from '../config.js';
import { SERVER_FILE } from '../domain/ledgerFiles.js';
import { AppError, UnavailableError } from '../errors.js';
import { SERVER_PROOF_PATH } from '../http/serverProof.js';
import { dataDirHolderOf } from '../main.js';
import { post } from './remoteLedger.js';

const untrusted = (message: string) =>
  new AppError(
    'DATA_DIR_LOCKED',
    `${message}; nothing was sent to it. Stop the process that holds the data directory, or name a server with --server`,
  );

/**
 * The URL of the server that holds the data directory, once it has proved, before any credential
 * or data goes to it, that it is the server that wrote `server.json`; null when no server holds it
 * (then the command opens the data directory itself, which a process holding it refuses).
 */
export const provenLocalServer = async (config: Config): Promise<string | null> => {
  const holder = dataDirHolderOf(config);
  if (!holder) return null;
  const dataDir = path.resolve(config.storage.dataDir);
  const file = path.join(dataDir, SERVER_FILE);
  if (holder.distrust) {
    throw untrusted(`Data directory ${dataDir} is in use by process ${holder.pid}, but ${file} cannot be trusted: ${holder.distrust}`);
  }
  if (!holder.server) return null;
  const { url, secret } = holder.server;
  const nonce = newSecret();
  let proof: unknown;
  try {
    const reply = await post(new URL(SERVER_PROOF_PATH, url), JSON.stringify({ nonce }), {});
    proof = reply.status === 200 ? (reply.body as { proof?: unknown }).proof : undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UnavailableError(`Cannot reach the server at ${url} that ${file} names (${code})`, { cause: error });
  }
  if (!isProof(secret, nonce, proof)) throw untrusted(`The server at ${url} did not prove it is the one that wrote ${file}`);
  return url;
};

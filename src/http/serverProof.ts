import type { FastifyInstance } from 'fastify';
import { isSecret, proofOf } from '../../infra/crypto/serverProof.js';
import { ValidationError } from '../errors.js';

/** Where the CLI checks, before it sends credentials or data, that the server answering is the one `server.json` names. */
export const SERVER_PROOF_PATH = '/health/proof';

/** Answers a nonce with its proof under `secret`; anyone may ask, since only the secret's holder can answer. */
export const mountServerProof = (app: FastifyInstance, secret: string): void => {
  app.post(SERVER_PROOF_PATH, (request) => {
    const nonce = (request.body as { nonce?: unknown } | undefined)?.nonce;
    if (!isSecret(nonce)) throw new ValidationError('nonce: 64 hexadecimal digits expected');
    return { proof: proofOf(secret, nonce) };
  });
};

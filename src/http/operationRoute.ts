import type { FastifyInstance } from 'fastify';
import { rateClassOf, type Operation } from '../operations.js';
import { parseInput, queryFields } from '../validation.js';
import { callerContext } from './api/guardOtherSurfaces.js';

/** Mounts an operation as an HTTP route: the JSON body (or query string for GET) is its input. */
export const mountOperation = (app: FastifyInstance, method: 'GET' | 'POST', url: string, operation: Operation) => {
  app.route({
    method,
    url,
    config: { rateClass: rateClassOf(operation) },
    handler: async (request) =>
      operation.run(
        parseInput(operation.input, (method === 'GET' ? queryFields(operation.input, request.query) : request.body) ?? {}),
        callerContext(request, 'tools'),
      ),
  });
};

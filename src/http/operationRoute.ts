import type { FastifyInstance } from 'fastify';
import { callOperation, rateClassOf, type Operation } from '../operations.js';
import { queryFields } from '../validation.js';
import { callerContext } from './api/guardOtherSurfaces.js';

/**
 * Mounts an operation as an HTTP route: the JSON body (or query string for GET) is its input, and
 * its output the answer, or what `answer` keeps of it where a specification fixes the route's shape.
 */
export const mountOperation = (
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  operation: Operation,
  answer: (output: never) => unknown = (output) => output,
) => {
  app.route({
    method,
    url,
    config: { rateClass: rateClassOf(operation), operation },
    // As every surface runs operations: through the one access check, for the caller the guard let through.
    handler: async (request) =>
      answer(
        (await callOperation(
          operation,
          (method === 'GET' ? queryFields(operation.input, request.query) : request.body) ?? {},
          callerContext(request, 'tools'),
        )) as never,
      ),
  });
};

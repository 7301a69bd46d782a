import type { FastifyInstance } from 'fastify';
import { jsonTextNestsDeeperThan, MAX_JSON_DEPTH } from '../domain/nesting.js';
import { ValidationError } from '../errors.js';

/**
 * JSON bodies on every surface (`/api/v1`, the tool API, MCP) are measured before they are parsed:
 * one nested deeper than `MAX_JSON_DEPTH` is refused with 400. Otherwise Fastify's own parser
 * takes them, with its checks (empty body, bad JSON, prototype poisoning). Call before any route
 * or plugin is registered: they inherit the parser.
 */
export const parseJsonWithinDepth = (app: FastifyInstance) => {
  const parse = app.getDefaultJsonParser('error', 'error');
  // JSON only: a text/plain body would reach an operation as a string, read as no fields at all.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (jsonTextNestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(new ValidationError(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep`), undefined);
      return;
    }
    void parse(request, text, done);
  });
};

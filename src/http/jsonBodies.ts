import type { FastifyInstance } from 'fastify';
import { jsonTextNestsDeeperThan } from '../domain/nesting.js';
import { ValidationError } from '../errors.js';

/** How deep a JSON body may nest: far more than any input takes, far less than a parser's or walker's stack. */
export const MAX_JSON_DEPTH = 64;

/**
 * JSON bodies on every surface (`/api/v1`, the tool API, MCP) are measured before they are parsed:
 * one nested deeper than `MAX_JSON_DEPTH` is refused with 400. Otherwise Fastify's own parser
 * takes them, with its checks (empty body, bad JSON, prototype poisoning). Call before any route
 * or plugin is registered: they inherit the parser.
 */
export const parseJsonWithinDepth = (app: FastifyInstance) => {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (jsonTextNestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(new ValidationError(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep`), undefined);
      return;
    }
    void parse(request, text, done);
  });
};

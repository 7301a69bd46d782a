import type { FastifyInstance } from 'fastify';
import type { LedgerMetrics } from './ledgerMetrics.js';

/** Requests that match no route share one label, so unknown URLs cannot grow the label set. */
const UNMATCHED = 'unmatched';

/**
 * Times every request by its route pattern (`/api/v1/connectors/:id`, never the raw URL) and serves
 * the Prometheus exposition at `GET /metrics`. Add it before other routes so that it sees them all.
 */
export const mountMetrics = (app: FastifyInstance, metrics: LedgerMetrics) => {
  metrics.collectProcessMetrics();
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? UNMATCHED, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  app.get('/metrics', async (_request, reply) => reply.type(metrics.contentType).send(await metrics.scrape()));
};

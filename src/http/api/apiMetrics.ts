/** Search latency and error rate over the last minute, for `GET /status`. */
export interface ApiMetrics {
  recordSearch(latencyMs: number, failed: boolean): void;
  recordRequest(failed: boolean): void;
  snapshot(): { avgQueryLatencyMs: number; queriesPerMinute: number; errorRate: number };
}

const WINDOW_MS = 60_000;

export const createApiMetrics = (now: () => number = Date.now): ApiMetrics => {
  const searches: { at: number; latencyMs: number }[] = [];
  const requests: { at: number; failed: boolean }[] = [];
  const prune = () => {
    const cutoff = now() - WINDOW_MS;
    while (searches.length && searches[0]!.at < cutoff) searches.shift();
    while (requests.length && requests[0]!.at < cutoff) requests.shift();
  };
  return {
    recordSearch: (latencyMs, failed) => {
      if (!failed) searches.push({ at: now(), latencyMs });
      requests.push({ at: now(), failed });
      prune();
    },
    recordRequest: (failed) => {
      requests.push({ at: now(), failed });
      prune();
    },
    snapshot: () => {
      prune();
      const total = searches.reduce((sum, s) => sum + s.latencyMs, 0);
      return {
        avgQueryLatencyMs: searches.length ? Math.round(total / searches.length) : 0,
        queriesPerMinute: searches.length,
        errorRate: requests.length
          ? Number((requests.filter((r) => r.failed).length / requests.length).toFixed(4))
          : 0,
      };
    },
  };
};

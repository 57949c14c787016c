import type { Server } from 'node:http';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';

/** How long the ops server waits on a client, and how many it serves at once. */
export interface OpsServerLimits {
  /** A request's headers must have arrived this long after its first byte (or the connection), or it gets 408 and is closed. */
  readonly headersTimeoutMs: number;
  /** The whole request must have arrived within this. */
  readonly requestTimeoutMs: number;
  /** A socket silent this long is closed, mid-request or between requests. */
  readonly idleTimeoutMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections at once; one more is closed as soon as it is accepted. */
  readonly maxConnections: number;
}

/**
 * The ops server answers GETs from probes, a scraper and a few operators' browsers: nothing it
 * serves needs a slow client, a long-held socket or hundreds of connections, and each of those is
 * a way for anyone who can connect to hold its sockets (Node's own defaults are a 60 s header
 * timeout and no limit on connections or idle sockets).
 */
export const OPS_SERVER_LIMITS: OpsServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  idleTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 256,
};

/**
 * Fastify's and Node's options for `limits`. Node checks the header and request timeouts on a
 * timer (30 s apart by default, so a 10 s limit could hold for 40 s): it runs at least every second
 * here, and at half the header timeout when that is shorter.
 */
export function serverLimitOptions(limits: OpsServerLimits): FastifyHttpOptions<Server> {
  return {
    connectionTimeout: limits.idleTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, limits.headersTimeoutMs / 2)),
    },
  };
}

/**
 * The Bull Board page: its scripts and stylesheet from /ui/static, its data from /ui/api. Its HTML
 * carries inline `style` attributes and a `<style>` element, hence `'unsafe-inline'` for styles
 * (never for scripts); its one inline `<script>` is JSON data, which no policy blocks.
 */
const DASHBOARD_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; manifest-src 'self'; base-uri 'self'; form-action 'self'; " +
  "frame-ancestors 'none'";

/** Everything else that has no policy of its own (JSON, metrics, probes, assets, errors): no content of any kind. */
const LOCKED_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Security headers on every answer of the ops server, refusals and errors included: no content
 * sniffing, no framing (CSP `frame-ancestors` and, for older browsers, `X-Frame-Options`), no
 * referrer, and a Content-Security-Policy; a route that sets its own policy (the console's pages)
 * keeps it.
 */
export function addSecurityHeaders(app: FastifyInstance, dashboardPath: string): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('content-security-policy')) {
      const html = String(reply.getHeader('content-type') ?? '').startsWith('text/html');
      const path = request.url.split('?', 1)[0];
      const dashboard = path === dashboardPath || path?.startsWith(`${dashboardPath}/`);
      reply.header('content-security-policy', html && dashboard ? DASHBOARD_POLICY : LOCKED_POLICY);
    }
    return payload;
  });
}

import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { isLoopback, REDIS_READINESS_TIMEOUT_MS } from '../config/index.js';
import { NightshiftError } from '../errors/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import { pingRedis, type RedisConnection } from '../store/index.js';
import { AccessGate } from './access/gate.js';
import type { PrincipalDirectory } from './access/principals.js';
import type { SessionStore } from './access/sessions.js';
import { type ConsoleOptions, RedisUnansweredError, registerConsole } from './console/routes.js';
import { serveDashboard } from './dashboard.js';
import {
  addSecurityHeaders,
  OPS_SERVER_LIMITS,
  type OpsServerLimits,
  serverLimitOptions,
} from './hardening.js';
import type { Metrics } from './metrics.js';

export { presentedToken } from './access/gate.js';

/** Where the dashboard is mounted. */
export const UI_PATH = '/ui';

export const DEFAULT_OPS_HOST = '127.0.0.1';
/** The port Prometheus exporters conventionally take for an application (the Dockerfile's HEALTHCHECK uses it). */
export const DEFAULT_OPS_PORT = 9464;

/**
 * One named check of `/readyz`: fine; degraded (still ready: the process does its work, but
 * something needs an operator, said in `reason` and `problems`); or not ready, and why.
 */
export type Readiness =
  | { ok: true }
  | { ok: true; degraded: true; reason: string; problems?: readonly string[] }
  | { ok: false; reason: string };

function isDegraded(check: Readiness | undefined): boolean {
  return check?.ok === true && 'degraded' in check;
}

export interface OpsServerOptions {
  /** The address to bind. Default 127.0.0.1. Anything but loopback requires `token`. */
  host?: string;
  /** The port; 0 picks a free one (see the `url` of the result). Default 9464. */
  port?: number;
  /**
   * When set, `/metrics`, the console and the dashboard (pages, assets and API) answer only requests that
   * present it (or a principal's token): `Authorization: Bearer <token>`, or HTTP Basic with any user
   * and the token as password. In the console it is a viewer. `/healthz` and `/readyz` never need it.
   * Default: none (loopback binds only, unless `principals` guard the server).
   */
  token?: string;
  /**
   * The console's principals (`NIGHTSHIFT_CONSOLE_TOKENS_FILE`): each signs in with its token (a
   * bearer header, or the `/login` form and its session cookie) and may do what its role allows.
   * Any of them may also read `/metrics` and `/ui`. Default: none.
   */
  principals?: PrincipalDirectory;
  /**
   * With no token and no principals, on loopback: the OS user the console lets act as an operator
   * (`NIGHTSHIFT_CONSOLE_ACTIONS=local`). Default: none, and the console is read-only.
   */
  localUser?: string;
  /** Where sign-ins are kept. Default: a SessionStore of this server. */
  sessions?: SessionStore;
  /** The Redis `/readyz` pings. */
  redis: RedisConnection;
  /** The run queue the dashboard shows (read-only). Default: none, and no dashboard. */
  queue?: Queue;
  /** What `/metrics` exposes. */
  metrics: Metrics;
  /** Where the operator's console at `/` reads from. Default: none, and no console. */
  console?: ConsoleOptions;
  /** Further readiness checks by name (`policy` for `nightshift start`), asked at each `/readyz`. */
  ready?: () => Record<string, Readiness> | Promise<Record<string, Readiness>>;
  /** Where failed requests are logged; never a header, so never the token. Default: nowhere. */
  log?: Logger;
  /** How long `/readyz` waits for Redis's PONG. Default 1000 ms. */
  redisTimeoutMs?: number;
  /** Timeouts and the connection limit; any not given is OPS_SERVER_LIMITS's. */
  limits?: Partial<OpsServerLimits>;
}

export interface OpsServer {
  /** `http://host:port`, with the port actually bound. */
  url: string;
  /** The port actually bound. */
  port: number;
  close(): Promise<void>;
}

export type OpsServerErrorCode = 'NS_OPS_TOKEN_REQUIRED' | 'NS_OPS_LISTEN_FAILED';

/** The ops server cannot start as configured; the message says why and never holds the token. */
export class OpsServerError extends NightshiftError {
  override name = 'OpsServerError';
  readonly code: OpsServerErrorCode;

  constructor(message: string, code: OpsServerErrorCode, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

export { isLoopback };

/**
 * Throws unless the bind is safe: the dashboard can see every run's data and `/metrics` names
 * every job, so a server reachable from other machines must require a token.
 */
export function assertSafeBind(
  host: string,
  token: string | undefined,
  principals?: PrincipalDirectory | undefined,
): void {
  if (isLoopback(host) || token || principals) return;
  throw new OpsServerError(
    `refusing to serve the dashboard and /metrics on ${host} without a token: set NIGHTSHIFT_UI_TOKEN ` +
      `or NIGHTSHIFT_CONSOLE_TOKENS_FILE, or bind to 127.0.0.1`,
    'NS_OPS_TOKEN_REQUIRED',
  );
}

/** An onRequest hook admitting only requests the gate knows (or public routes); a refusal says how to sign in. */
function requireAccess(gate: AccessGate, log: Logger) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (gate.admit(request)) return;
    const header = request.headers.authorization;
    // never what was presented (a token with a typo is still nearly the token), only its kind
    const scheme = !header
      ? 'none'
      : (/^(basic|bearer) /i.exec(header.trim())?.[1]?.toLowerCase() ?? 'other');
    log.debug(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', scheme },
      'ops request refused: no valid token',
    );
    const page = request.method === 'GET' && String(request.headers.accept ?? '').includes('text/html');
    if (page && gate.signIns && !request.url.startsWith(UI_PATH))
      return reply.code(303).header('location', '/login').header('cache-control', 'no-store').send();
    return reply
      .code(401)
      .header('www-authenticate', 'Basic realm="nightshift", charset="UTF-8"')
      .header('cache-control', 'no-store')
      .send({
        error: 'Unauthorized',
        message: gate.signIns
          ? 'this endpoint needs a console token (Authorization: Bearer <token>, or sign in at /login) or the ops token'
          : 'this endpoint needs the ops token: Authorization: Bearer <token>, or HTTP Basic with the token as password',
      });
  };
}

function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

async function redisReadiness(redis: RedisConnection, timeoutMs: number): Promise<Readiness> {
  if (await pingRedis(redis, timeoutMs)) return { ok: true };
  return {
    ok: false,
    reason:
      redis.status === 'ready' ? `no PONG within ${timeoutMs} ms` : `not connected (client ${redis.status})`,
  };
}

/**
 * The ops HTTP server: `/healthz` (the process answers), `/readyz` (Redis answers and every
 * `ready` check passes; 503 with the failing checks otherwise; 200 with `degraded` naming the
 * checks that pass with a warning), `/metrics` (Prometheus text), the operator's console at `/`
 * (its pages and their JSON under `/api/`, see console/routes.ts) and
 * the BullMQ dashboard under `/ui`, read-only: it shows runs, it cannot retry, remove or add
 * them (the scheduler and the run history own those decisions).
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const host = options.host ?? DEFAULT_OPS_HOST;
  const port = options.port ?? DEFAULT_OPS_PORT;
  assertSafeBind(host, options.token || undefined, options.principals);
  if (options.localUser && !isLoopback(host))
    throw new OpsServerError(
      `refusing to let the local user act in the console on ${host}: NIGHTSHIFT_CONSOLE_ACTIONS=local is for loopback only`,
      'NS_OPS_TOKEN_REQUIRED',
    );
  const app = await opsApp(options);
  try {
    await app.listen({ host, port });
  } catch (error) {
    await app.close().catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new OpsServerError(`cannot listen on ${urlHost(host)}:${port} (${code})`, 'NS_OPS_LISTEN_FAILED', {
      cause: error,
    });
  }
  const bound = (app.server.address() as AddressInfo).port;
  return {
    url: `http://${urlHost(host)}:${bound}`,
    port: bound,
    close: async () => {
      await app.close();
    },
  };
}

/** The ops server's routes, hooks and limits, not yet listening (`inject` reaches it as any client would). */
export async function opsApp(options: OpsServerOptions): Promise<FastifyInstance> {
  const token = options.token || undefined;
  const log = options.log ?? silentLogger;
  const limits = { ...OPS_SERVER_LIMITS, ...options.limits };
  const gate = new AccessGate({
    uiToken: token,
    principals: options.principals,
    localUser: options.localUser,
    sessions: options.sessions,
  });

  const app = Fastify({ logger: false, forceCloseConnections: true, ...serverLimitOptions(limits) });
  app.server.maxConnections = limits.maxConnections;
  addSecurityHeaders(app, UI_PATH);
  app.addHook('onError', async (request, reply, error) => {
    // the route pattern, not the URL: nothing a client typed, and never a header; a console page
    // that Redis did not answer in time is no news (the connection reports an outage once)
    const level = error instanceof RedisUnansweredError ? 'debug' : 'error';
    log[level](
      { err: error, method: request.method, route: request.routeOptions.url, statusCode: reply.statusCode },
      'ops request failed',
    );
  });

  app.get('/healthz', async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ ok: true }),
  );

  app.get('/readyz', async (request, reply) => {
    const checks: Record<string, Readiness> = {
      redis: await redisReadiness(options.redis, options.redisTimeoutMs ?? REDIS_READINESS_TIMEOUT_MS),
    };
    try {
      Object.assign(checks, (await options.ready?.()) ?? {});
    } catch (error) {
      checks.readiness = { ok: false, reason: (error as Error).message };
    }
    const failing = Object.keys(checks).filter((name) => !checks[name]?.ok);
    const degraded = Object.keys(checks).filter((name) => isDegraded(checks[name]));
    // the reasons name the policy's path and quote its problems: for this machine and token holders only
    const detailed =
      isLoopback(request.socket.remoteAddress ?? '') ||
      (gate.required && gate.authenticate(request) !== undefined);
    return reply
      .code(failing.length === 0 ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({
        ready: failing.length === 0,
        ...(degraded.length > 0 ? { degraded } : {}),
        failing,
        ...(detailed ? { checks } : {}),
      });
  });

  await app.register(async (guarded) => {
    guarded.addHook('onRequest', requireAccess(gate, log));

    guarded.get('/metrics', async (_request, reply) => {
      const { contentType, body } = await options.metrics.scrape();
      return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
    });

    const consoleOptions = options.console;
    if (consoleOptions)
      await guarded.register(async (scope) => registerConsole(scope, consoleOptions, gate, log));

    if (options.queue) serveDashboard(guarded, options.queue, UI_PATH);
  });
  return app;
}

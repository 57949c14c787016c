import type { AddressInfo, Socket } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import { SIM_REQUEST_LOG_LIMIT } from '../config/index.js';
import { type Clock, systemClock, type Timer } from '../time/index.js';
import { ADMIN_PREFIX, registerAdminRoutes } from './admin.js';
import { type Credentials, checkAuth } from './auth.js';
import { OPERATION_ROUTES, type OperationName, type OperationRoute } from './catalog.js';
import {
  badRequest,
  createRequestIdFactory,
  errorBody,
  type Json,
  notFound,
  SimError,
  successBody,
} from './envelope.js';
import { type FaultConfig, type FaultConfigInput, type FaultDecision, parseFaultConfig } from './faults.js';
import { DEFAULT_FLEET, type Fleet } from './fleet.js';
import { HANDLERS } from './operations/index.js';
import { authPresence, type RequestLogEntry } from './request-log.js';
import { type ResetTarget, Simulator } from './simulator.js';
import type { OrgUsersShape, SimState } from './state.js';

export interface SimulatorOptions {
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port to listen on; 0 picks a free one. Default `0`. */
  port?: number;
  /** The `x-api-key` every operation but list org users requires. Default `sim-api-key`. */
  apiKey?: string;
  /** The bearer token list org users requires. Default `sim-bearer-token`. */
  bearerToken?: string;
  /** Seed of the generated fleet. Default `1`. */
  seed?: number;
  /** Size of the generated fleet. Default 4 workgroups × 3 workspaces. */
  fleet?: Fleet;
  /** A state to start from instead of a generated fleet (same format as `GET /_sim/state`). */
  state?: unknown;
  /** Duration of every transition (pause, resume, restore, upgrade). Default `2000`. */
  transitionMs?: number;
  /** Faults from the start. Default none. */
  faults?: FaultConfigInput;
  /** Serve the `/_sim/` admin API. Default `true`. */
  admin?: boolean;
  /** Body shape of list org users. Default: the state's setting (`auto`). */
  orgUsersShape?: OrgUsersShape;
  /** Take the caller's address from `X-Forwarded-For`. Default `false`. */
  trustProxy?: boolean;
  /** Requests kept for `GET /_sim/requests`. Default `10000`. */
  requestLogLimit?: number;
  /** Receives fastify's request logging and completed transitions. Default: no logging at all. */
  logger?: Logger;
  /** Time source for timestamps and transitions. Default: the system clock. */
  clock?: Clock;
}

export interface SimulatorHandle {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  /** The live state; read it, change it only through the API (changes made here bypass the caches). */
  readonly state: SimState;
  /** Stops listening, drops hanging and delayed requests, clears every timer. */
  close(): Promise<void>;
  /** As `PUT /_sim/faults`: replaces the fault configuration; throws a RangeError naming a bad field. */
  setFaults(faults: FaultConfigInput): FaultConfig;
  /** As `POST /_sim/reset`. */
  reset(target?: ResetTarget): void;
  /** As `GET /_sim/requests`. */
  requests(since?: number): RequestLogEntry[];
}

export const DEFAULT_API_KEY = 'sim-api-key';
export const DEFAULT_BEARER_TOKEN = 'sim-bearer-token';
export const DEFAULT_TRANSITION_MS = 2000;

const JSON_TYPE = 'application/json; charset=utf-8';

/** Starts the simulator and resolves once it is listening. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const clock = options.clock ?? systemClock;
  const faults = parseFaultConfig(options.faults ?? {}, 'options.faults');
  const credentials: Credentials = {
    apiKey: options.apiKey ?? DEFAULT_API_KEY,
    bearerToken: options.bearerToken ?? DEFAULT_BEARER_TOKEN,
  };
  const sim = new Simulator({
    seed: options.seed ?? 1,
    fleet: options.fleet ?? DEFAULT_FLEET,
    state: options.state,
    faults,
    transitionMs: options.transitionMs ?? DEFAULT_TRANSITION_MS,
    clock,
    orgUsersShape: options.orgUsersShape,
    requestLogLimit: options.requestLogLimit ?? SIM_REQUEST_LOG_LIMIT,
    onTransition: (transition) => options.logger?.info({ transition }, 'transition completed'),
  });
  const app = createApp(options);
  const pending: Pending = { delayTimers: new Set(), hanging: new Set() };
  const responder = new Responder(sim, clock);

  registerBodyParser(app);
  registerErrorHandlers(app, responder);
  registerOperationRoutes(app, { sim, clock, credentials, responder, pending });
  if (options.admin ?? true) {
    registerAdminRoutes(app, sim, (reply, status, json) =>
      responder.send(reply.request, reply, status, json),
    );
  }

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return simulatorHandle(`http://${host}:${address.port}`, sim, app, pending);
}

function createApp(options: SimulatorOptions): FastifyInstance {
  const loggerInstance: FastifyBaseLogger | undefined = options.logger;
  return Fastify({
    ...(loggerInstance ? { loggerInstance } : { logger: false }),
    genReqId: createRequestIdFactory(),
    trustProxy: options.trustProxy ?? false,
    forceCloseConnections: true,
  });
}

/** What is left to stop at close: answers still delayed, and connections a fault holds open. */
interface Pending {
  readonly delayTimers: Set<Timer>;
  readonly hanging: Set<Socket>;
}

/** Answers requests, and records each answer (or a fault's non-answer) in the simulator's request log. */
class Responder {
  /** The fault decided for a request, kept only when there is one, for the request log. */
  readonly faulted = new WeakMap<FastifyRequest, FaultDecision>();
  readonly #sim: Simulator;
  readonly #clock: Clock;

  constructor(sim: Simulator, clock: Clock) {
    this.#sim = sim;
    this.#clock = clock;
  }

  record(request: FastifyRequest, status: number | null): void {
    if (request.url.startsWith(ADMIN_PREFIX)) return;
    const applied = this.faulted.get(request);
    const delayMs = applied?.delayMs ?? 0;
    const query = request.url.indexOf('?');
    this.#sim.requestLog.add(
      {
        method: request.method,
        path: query === -1 ? request.url : request.url.slice(0, query),
        operation: (request.routeOptions.config as { operation?: OperationName }).operation ?? null,
        status,
        requestId: request.id,
        auth: authPresence(request.headers),
        fault: applied && applied.outcome !== 'pass' ? applied.outcome : delayMs > 0 ? 'latency' : null,
        delayMs,
      },
      this.#clock.now(),
    );
  }

  send(request: FastifyRequest, reply: FastifyReply, status: number, body: Json): void {
    reply.code(status).header('content-type', JSON_TYPE).header('x-request-id', request.id).send(body);
    this.record(request, status);
  }

  sendError(request: FastifyRequest, reply: FastifyReply, error: SimError): void {
    this.send(request, reply, error.status, errorBody(request.id, error));
  }
}

/** Empty bodies are tolerated: clients send a JSON content type on body-less POSTs and PUTs. */
function registerBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(badRequest('body', 'the request body is not valid JSON'), undefined);
    }
  });
}

/** Every error and unknown path is answered in the API's error envelope. */
function registerErrorHandlers(app: FastifyInstance, responder: Responder): void {
  app.setErrorHandler((error, request, reply) => {
    responder.sendError(request, reply, toSimError(error, app));
  });

  app.setNotFoundHandler((request, reply) => {
    responder.sendError(
      request,
      reply,
      notFound('path', `no operation at ${request.method} ${request.url.split('?')[0]}`),
    );
  });
}

/** What the operations' routes share. */
interface Gateway {
  readonly sim: Simulator;
  readonly clock: Clock;
  readonly credentials: Credentials;
  readonly responder: Responder;
  readonly pending: Pending;
}

/** The 15 operations, in the catalog's order. */
function registerOperationRoutes(app: FastifyInstance, gateway: Gateway): void {
  const { sim, clock, responder, pending } = gateway;
  for (const route of OPERATION_ROUTES) {
    const handle = HANDLERS[route.name];
    app.route({
      method: route.method,
      url: route.url,
      config: { operation: route.name },
      // Faults and auth run before the body is parsed, as a gateway in front of the service would.
      onRequest: (request, reply, done) => {
        const decision = sim.faults.decide(route.name, clock.now());
        if (decision.outcome !== 'pass' || decision.delayMs > 0) responder.faulted.set(request, decision);
        if (decision.delayMs === 0) {
          if (admitted(gateway, request, reply, decision, route)) done();
          return;
        }
        const timer = clock.setTimer(decision.delayMs, () => {
          pending.delayTimers.delete(timer);
          if (admitted(gateway, request, reply, decision, route)) done();
        });
        pending.delayTimers.add(timer);
      },
      handler: (request, reply) => {
        const result = handle(sim.context, {
          params: request.params as Record<string, string>,
          body: request.body,
          ip: request.ip,
        });
        if ('bareJson' in result) responder.send(request, reply, 200, result.bareJson);
        else responder.send(request, reply, 200, successBody(request.id, result.message, result.resultJson));
      },
    });
  }
}

/**
 * Carries out the fault decided for a request, then checks its credentials: true when the request
 * goes on to its operation, false when it has been answered (or never will be).
 */
function admitted(
  { credentials, responder, pending }: Gateway,
  request: FastifyRequest,
  reply: FastifyReply,
  decision: FaultDecision,
  route: OperationRoute,
): boolean {
  switch (decision.outcome) {
    case 'drop':
      responder.record(request, null);
      reply.hijack();
      request.raw.socket.destroy();
      return false;
    case 'hang': {
      responder.record(request, null);
      reply.hijack();
      const socket = request.raw.socket;
      pending.hanging.add(socket);
      socket.once('close', () => pending.hanging.delete(socket));
      return false;
    }
    case 'throttle':
      reply.header('retry-after', String(decision.retryAfterSeconds));
      responder.sendError(
        request,
        reply,
        new SimError('Quota-Exceed', '', `rate limit exceeded; retry after ${decision.retryAfterSeconds}s`),
      );
      return false;
    case 'error':
      responder.sendError(request, reply, new SimError('Internal-Error', '', 'injected internal error'));
      return false;
    case 'pass': {
      const denied = checkAuth(route.auth, request.headers, credentials);
      if (denied) {
        responder.sendError(request, reply, denied);
        return false;
      }
      return true;
    }
  }
}

function simulatorHandle(
  url: string,
  sim: Simulator,
  app: FastifyInstance,
  pending: Pending,
): SimulatorHandle {
  let closing: Promise<void> | undefined;
  return {
    url,
    get state() {
      return sim.store.state;
    },
    close() {
      closing ??= (async () => {
        sim.close();
        for (const timer of pending.delayTimers) timer.cancel();
        pending.delayTimers.clear();
        for (const socket of pending.hanging) socket.destroy();
        pending.hanging.clear();
        await app.close();
      })();
      return closing;
    },
    setFaults(input) {
      const config = parseFaultConfig(input, 'setFaults');
      sim.faults.configure(config);
      return config;
    },
    reset(target) {
      sim.reset(target);
    },
    requests(since) {
      return sim.requestLog.since(since);
    },
  };
}

/**
 * Errors fastify raises itself (unparseable body, unsupported content type, body too large)
 * are the caller's fault: Bad-Request. Anything else is a simulator bug: Internal-Error.
 */
function toSimError(error: unknown, app: FastifyInstance): SimError {
  if (error instanceof SimError) return error;
  const statusCode = (error as { statusCode?: number }).statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return badRequest('body', (error as Error).message);
  }
  app.log.error({ err: error }, 'simulator error');
  return new SimError('Internal-Error', '', 'internal simulator error');
}

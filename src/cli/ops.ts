import { readFileSync } from 'node:fs';
import type { Logger } from '../log/logger.js';
import { registerFleetMetrics } from '../ops/fleet-metrics.js';
import {
  assertSafeBind,
  DEFAULT_OPS_HOST,
  DEFAULT_OPS_PORT,
  Metrics,
  OpsServerError,
  type Readiness,
  startOpsServer,
  UI_PATH,
} from '../ops/index.js';
import { UsageError } from './exit.js';
import type { RedisRuntime } from './runtime.js';

/** Where the ops server listens and the token it asks for; parsed from the environment. */
export interface OpsSettings {
  host: string;
  port: number;
  token: string | undefined;
}

/**
 * The ops server's settings: `NIGHTSHIFT_HTTP_HOST` (default 127.0.0.1), `NIGHTSHIFT_HTTP_PORT`
 * (default 9464; 0 for a free port; `off` for no server: undefined) and `NIGHTSHIFT_UI_TOKEN` or
 * `NIGHTSHIFT_UI_TOKEN_FILE`. A UsageError (exit 2) names the variable at fault, before anything
 * starts; a bind beyond loopback without a token is one.
 */
export function opsSettings(env: NodeJS.ProcessEnv = process.env): OpsSettings | undefined {
  const rawPort = env.NIGHTSHIFT_HTTP_PORT?.trim() ?? '';
  if (rawPort.toLowerCase() === 'off') return undefined;
  const port = rawPort === '' ? DEFAULT_OPS_PORT : Number(rawPort);
  if (!/^\d+$/.test(rawPort || '0') || !Number.isInteger(port) || port > 65_535)
    throw new UsageError(
      `NIGHTSHIFT_HTTP_PORT must be a port number (0 for any free port) or off, got "${rawPort}"`,
    );
  const host = env.NIGHTSHIFT_HTTP_HOST?.trim() || DEFAULT_OPS_HOST;
  const token = uiToken(env);
  try {
    assertSafeBind(host, token);
  } catch (error) {
    if (error instanceof OpsServerError)
      throw new UsageError(`NIGHTSHIFT_HTTP_HOST=${host}: ${error.message}`);
    throw error;
  }
  return { host, port, token };
}

function uiToken(env: NodeJS.ProcessEnv): string | undefined {
  const direct = env.NIGHTSHIFT_UI_TOKEN?.trim();
  if (direct) return direct;
  const file = env.NIGHTSHIFT_UI_TOKEN_FILE;
  if (!file) return undefined;
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new UsageError(
      `NIGHTSHIFT_UI_TOKEN_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (!token) throw new UsageError('NIGHTSHIFT_UI_TOKEN_FILE names an empty file');
  return token;
}

/** What a service process gets from its ops server: the metrics to report into, and a stop. */
export interface OpsRole {
  /** Undefined when the server is off: nothing would ever read them. */
  metrics: Metrics | undefined;
  /** The dashboard's address; undefined when the server is off. */
  dashboard: string | undefined;
  close(): Promise<void>;
}

/**
 * Starts the ops server of a service process (`worker`, `start`) on its Redis runtime, and logs
 * where it listens (never the token). Fails with a UsageError when the address cannot be bound;
 * the caller closes the runtime.
 */
export async function startOpsRole(
  settings: OpsSettings | undefined,
  runtime: RedisRuntime,
  log: Logger,
  ready?: () => Record<string, Readiness>,
): Promise<OpsRole> {
  if (!settings) {
    log.info('ops server off (NIGHTSHIFT_HTTP_PORT=off)');
    return { metrics: undefined, dashboard: undefined, close: async () => {} };
  }
  const metrics = new Metrics({ queue: runtime.queue, log });
  registerFleetMetrics(metrics.registry, runtime.state, { log });
  let server: Awaited<ReturnType<typeof startOpsServer>>;
  try {
    server = await startOpsServer({
      ...settings,
      redis: runtime.redis,
      queue: runtime.queue,
      metrics,
      ready,
      log,
    });
  } catch (error) {
    if (!(error instanceof OpsServerError)) throw error;
    throw new UsageError(
      error.code === 'ERR_OPS_LISTEN'
        ? `ops server: ${error.message}; set NIGHTSHIFT_HTTP_PORT to a free port, 0 for any, or off`
        : `ops server: ${error.message}`,
    );
  }
  // `address`, not `url`: the logger redacts every top-level `url` (they may hold credentials)
  log.info(
    {
      address: server.url,
      dashboard: `${server.url}${UI_PATH}`,
      auth: settings.token ? 'token' : 'none',
    },
    'ops server listening',
  );
  return { metrics, dashboard: `${server.url}${UI_PATH}`, close: () => server.close() };
}

import { userInfo } from 'node:os';
import { consoleTokensText, type Settings, uiToken } from '../config/index.js';
import type { SinkCommandAllowlist } from '../engine/index.js';
import type { Logger } from '../log/index.js';
import {
  assertSafeBind,
  DEFAULT_OPS_HOST,
  DEFAULT_OPS_PORT,
  fleetSnapshots,
  isLoopback,
  Metrics,
  OpsServerError,
  type PrincipalDirectory,
  type Readiness,
  readPrincipals,
  startOpsServer,
  TokensFileError,
  UI_PATH,
} from '../ops/index.js';
import type { PolicyVariables } from '../policy/index.js';
import { consoleControl, consoleSources, runNowCheck } from './console-sources.js';
import { asUsage, UsageError } from './exit.js';
import type { RedisRuntime } from './runtime.js';

/** Where the ops server listens and the token it asks for; parsed from the environment. */
export interface OpsSettings {
  host: string;
  port: number;
  /**
   * How many ports after `port` to try when another process holds it: OPS_FALLBACK_PORTS for
   * the default port, 0 for a port set explicitly (taken, it is fatal).
   */
  fallbackPorts: number;
  token: string | undefined;
  /** The console's principals (`NIGHTSHIFT_CONSOLE_TOKENS_FILE` or `NIGHTSHIFT_CONSOLE_TOKENS`). */
  principals: PrincipalDirectory | undefined;
  /** The OS user who may act in a loopback console without principals (`NIGHTSHIFT_CONSOLE_ACTIONS=local`). */
  localUser: string | undefined;
}

/**
 * Who acts in a console without principals: the OS user with `NIGHTSHIFT_CONSOLE_ACTIONS=local`, on
 * loopback only and with no token set (a token means people sign in); nobody otherwise.
 */
function localUser(settings: Settings, host: string, guarded: boolean): string | undefined {
  if (settings.http.consoleActions !== 'local') return undefined;
  if (guarded)
    throw new UsageError(
      'NIGHTSHIFT_CONSOLE_ACTIONS=local is for a loopback console without tokens: with NIGHTSHIFT_UI_TOKEN or NIGHTSHIFT_CONSOLE_TOKENS_FILE set, people sign in and their roles decide',
    );
  if (!isLoopback(host))
    throw new UsageError(
      `NIGHTSHIFT_CONSOLE_ACTIONS=local is for loopback only, and NIGHTSHIFT_HTTP_HOST is ${host}: give people tokens (nightshift console-token)`,
    );
  return settings.user ?? userInfo().username;
}

/**
 * Ports tried after the default 9464 when it is taken (9465 to 9473): roles run side by side on
 * one host with defaults, each on the next free one, in the order they start.
 */
export const OPS_FALLBACK_PORTS = 9;

/**
 * The ops server's settings: `NIGHTSHIFT_HTTP_HOST` (default 127.0.0.1), `NIGHTSHIFT_HTTP_PORT`
 * (default 9464, or the next free one up to 9473; 0 for a free port; `off` for no server:
 * undefined) and `NIGHTSHIFT_UI_TOKEN` or `NIGHTSHIFT_UI_TOKEN_FILE`. A UsageError (exit 2) names
 * the variable at fault, before anything starts; a bind beyond loopback without a token is one.
 */
export function opsSettings(settings: Settings): OpsSettings | undefined {
  const { port } = settings.http;
  if (port === 'off') return undefined;
  const host = settings.http.host ?? DEFAULT_OPS_HOST;
  const token = asUsage(() => uiToken(settings));
  const tokens = asUsage(() => consoleTokensText(settings));
  const principals = tokens ? principalsOf(tokens.text, tokens.source) : undefined;
  try {
    assertSafeBind(host, token, principals);
  } catch (error) {
    if (error instanceof OpsServerError)
      throw new UsageError(`NIGHTSHIFT_HTTP_HOST=${host}: ${error.message}`);
    throw error;
  }
  return {
    host,
    port: port ?? DEFAULT_OPS_PORT,
    fallbackPorts: port === undefined ? OPS_FALLBACK_PORTS : 0,
    token,
    principals,
    localUser: localUser(settings, host, Boolean(token || principals)),
  };
}

/** What a service process gets from its ops server: the metrics to report into, and a stop. */
export interface OpsRole {
  /** Undefined when the server is off: nothing would ever read them. */
  metrics: Metrics | undefined;
  /** The console's address; undefined when the server is off. */
  console: string | undefined;
  /** The queue dashboard's address; undefined when the server is off. */
  dashboard: string | undefined;
  close(): Promise<void>;
}

const OFF: OpsRole = { metrics: undefined, console: undefined, dashboard: undefined, close: async () => {} };

/** The principals of a tokens file; one that cannot be used is bad usage (exit 2), naming the file and entry. */
function principalsOf(text: string, source: string): PrincipalDirectory {
  try {
    return readPrincipals(text, source);
  } catch (error) {
    if (error instanceof TokensFileError) throw new UsageError(error.message);
    throw error;
  }
}

/** How people use the console, for the log line that says where it listens (never a token or a name). */
function consoleMode(settings: OpsSettings): string {
  if (settings.principals) return `sign-in, ${settings.principals.size} principal(s)`;
  if (settings.localUser) return 'the local user may act';
  return 'read-only';
}

/** Whether the server could not listen because another process holds the port. */
function portTaken(error: OpsServerError): boolean {
  return (
    error.code === 'NS_OPS_LISTEN_FAILED' && (error.cause as NodeJS.ErrnoException)?.code === 'EADDRINUSE'
  );
}

/**
 * Starts the ops server of a service process (`worker`, `start`) on its Redis runtime, and logs
 * where it listens (never the token). The default port taken by another process (a second role
 * on the host) is no reason to stop: the next free port up to `fallbackPorts` further serves,
 * or none, and one warning says which and why. Fails with a UsageError when an address set
 * explicitly cannot be bound; the caller closes the runtime.
 */
export async function startOpsRole(
  settings: OpsSettings | undefined,
  runtime: RedisRuntime,
  log: Logger,
  {
    variables,
    sinkCommands,
    ready,
  }: {
    /** What the console reads the policy's `${VAR}`s with: the process's environment. */
    variables: PolicyVariables;
    /** The programs a sink command may run here, for a run the console queues (`NIGHTSHIFT_SINK_COMMANDS`). */
    sinkCommands: SinkCommandAllowlist;
    /** Further `/readyz` checks (`policy` for a scheduler). */
    ready?: () => Record<string, Readiness>;
  },
): Promise<OpsRole> {
  if (!settings) {
    log.info('ops server off (NIGHTSHIFT_HTTP_PORT=off)');
    return OFF;
  }
  const metrics = new Metrics({
    queue: runtime.queue,
    history: runtime.history,
    fleet: fleetSnapshots(runtime.state),
    log,
  });
  const last = settings.port + settings.fallbackPorts;
  let server: Awaited<ReturnType<typeof startOpsServer>> | undefined;
  for (let port = settings.port; !server; port += 1) {
    try {
      server = await startOpsServer({
        host: settings.host,
        token: settings.token,
        principals: settings.principals,
        localUser: settings.localUser,
        port,
        redis: runtime.redis,
        queue: runtime.queue,
        metrics,
        console: {
          sources: consoleSources(runtime, variables),
          control: consoleControl(runtime, runNowCheck(variables, sinkCommands)),
        },
        ready,
        log,
      });
    } catch (error) {
      if (!(error instanceof OpsServerError)) throw error;
      if (portTaken(error) && port < last) continue;
      if (portTaken(error) && settings.fallbackPorts > 0) {
        log.warn(
          { host: settings.host, ports: `${settings.port}-${last}` },
          'ops server off: the default port and the next ones are taken by other processes; set NIGHTSHIFT_HTTP_PORT to choose one',
        );
        return OFF;
      }
      throw new UsageError(
        error.code === 'NS_OPS_LISTEN_FAILED'
          ? `ops server: ${error.message}; set NIGHTSHIFT_HTTP_PORT to a free port, 0 for any, or off`
          : `ops server: ${error.message}`,
      );
    }
  }
  const listening = {
    // `address`, not `url`: the logger redacts every top-level `url` (they may hold credentials)
    address: server.url,
    console: `${server.url}/`,
    dashboard: `${server.url}${UI_PATH}`,
    auth: settings.token || settings.principals ? 'token' : 'none',
    consoleAccess: consoleMode(settings),
  };
  if (settings.fallbackPorts > 0 && server.port !== settings.port)
    log.warn(
      {
        ...listening,
        fallback: `port ${settings.port} is taken by another process (a second role on this host?); NIGHTSHIFT_HTTP_PORT chooses the port`,
      },
      'ops server listening',
    );
  else log.info(listening, 'ops server listening');
  const served = server;
  return { metrics, console: listening.console, dashboard: listening.dashboard, close: () => served.close() };
}

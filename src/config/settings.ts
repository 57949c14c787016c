import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error.js';
import { DEFAULT_REDIS_URL, EnvironmentSchema, type LogLevel } from './schema.js';

/** Environment variables by name, as a process has them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Everything nightshift takes from its environment, read once into types with defaults. */
export interface Settings {
  readonly api: {
    /** Unset for commands that make no API call; `apiCredentials` asks for it. */
    readonly url: string | undefined;
    readonly key: string | undefined;
    readonly keyFile: string | undefined;
    readonly bearerToken: string | undefined;
    readonly timeoutMs: number;
    /** Requests per second; undefined for no limit. */
    readonly rateLimit: number | undefined;
  };
  readonly redis: {
    /** Unset: the services take DEFAULT_REDIS_URL, `run --inline`, `plan` and `next` no Redis at all. */
    readonly url: string | undefined;
    readonly prefix: string;
  };
  readonly worker: {
    readonly concurrency: number;
    readonly pollIntervalMs: number;
    readonly lockMs: number;
    readonly maxStalls: number;
    readonly shutdownGraceMs: number;
  };
  readonly scheduler: { readonly leadMs: number };
  readonly history: { readonly perJob: number; readonly days: number };
  readonly log: {
    readonly level: LogLevel;
    /** Undefined: `pretty` on a terminal, `json` otherwise. */
    readonly format: 'json' | 'pretty' | undefined;
  };
  readonly http: {
    /** Undefined: the ops server's defaults (127.0.0.1, 9464 or the next free port to 9473). */
    readonly host: string | undefined;
    readonly port: number | 'off' | undefined;
    readonly uiToken: string | undefined;
    readonly uiTokenFile: string | undefined;
  };
  readonly terminal: {
    /** `NO_COLOR` set to anything. */
    readonly noColor: boolean;
    /** `TERM=dumb`: no colour, no redrawing a line in place. */
    readonly dumb: boolean;
    /** `CI` set: output goes to a log that keeps every redraw. */
    readonly ci: boolean;
  };
  /** Who runs the command (`USER`), for records that say who did something. */
  readonly user: string | undefined;
  /** Every variable, for a policy's `${VAR}`s. */
  readonly environment: Environment;
}

/**
 * Reads `env` into Settings, or throws a ConfigError naming every variable at fault, what is
 * wrong with it and what was expected.
 */
export function loadSettings(env: Environment): Settings {
  const parsed = EnvironmentSchema.safeParse(env);
  if (!parsed.success)
    throw new ConfigError(
      parsed.error.issues
        .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')} ${issue.message}` : issue.message))
        .join('; '),
    );
  const v = parsed.data;
  return {
    api: {
      url: v.NIGHTSHIFT_API_URL,
      key: v.NIGHTSHIFT_API_KEY,
      keyFile: v.NIGHTSHIFT_API_KEY_FILE,
      bearerToken: v.NIGHTSHIFT_BEARER_TOKEN,
      timeoutMs: v.NIGHTSHIFT_API_TIMEOUT_MS,
      rateLimit: v.NIGHTSHIFT_API_RATE_LIMIT,
    },
    redis: { url: v.REDIS_URL, prefix: v.NIGHTSHIFT_REDIS_PREFIX },
    worker: {
      concurrency: v.NIGHTSHIFT_WORKER_CONCURRENCY,
      pollIntervalMs: v.NIGHTSHIFT_POLL_INTERVAL_MS,
      lockMs: v.NIGHTSHIFT_LOCK_MS,
      maxStalls: v.NIGHTSHIFT_MAX_STALLS,
      shutdownGraceMs: v.NIGHTSHIFT_SHUTDOWN_GRACE_MS,
    },
    scheduler: { leadMs: v.NIGHTSHIFT_SCHEDULE_LEAD_MS },
    history: { perJob: v.NIGHTSHIFT_HISTORY_PER_JOB, days: v.NIGHTSHIFT_HISTORY_DAYS },
    log: { level: v.NIGHTSHIFT_LOG_LEVEL, format: v.NIGHTSHIFT_LOG_FORMAT },
    http: {
      host: v.NIGHTSHIFT_HTTP_HOST,
      port: v.NIGHTSHIFT_HTTP_PORT,
      uiToken: v.NIGHTSHIFT_UI_TOKEN,
      uiTokenFile: v.NIGHTSHIFT_UI_TOKEN_FILE,
    },
    terminal: { noColor: v.NO_COLOR, dumb: v.TERM === 'dumb', ci: v.CI },
    user: v.USER,
    environment: Object.freeze({ ...env }),
  };
}

/** The settings of a role this process starts with `variables` on top of its own environment. */
export function withVariables(settings: Settings, variables: Environment): Settings {
  return loadSettings({ ...settings.environment, ...variables });
}

/** The Redis a service uses: `REDIS_URL`, else the local default. */
export function serviceRedisUrl(settings: Settings): string {
  return settings.redis.url ?? DEFAULT_REDIS_URL;
}

/** What the API client needs to authenticate, once every credential it needs is there. */
export interface ApiCredentials {
  baseUrl: string;
  apiKey: string;
  bearerToken: string | undefined;
}

/**
 * The API's address and credentials, for the commands that call it: `NIGHTSHIFT_API_URL`,
 * `NIGHTSHIFT_API_KEY` or the file `NIGHTSHIFT_API_KEY_FILE` names (for secrets mounted as
 * files), `NIGHTSHIFT_BEARER_TOKEN` when set. Every missing one is named at once.
 */
export function apiCredentials(settings: Settings): ApiCredentials {
  const { url, key, keyFile, bearerToken } = settings.api;
  const problems: string[] = [];
  if (!url) problems.push('NIGHTSHIFT_API_URL is not set (the base URL of the management API)');
  let apiKey = key;
  if (!apiKey && keyFile) {
    const read = readSecretFile('NIGHTSHIFT_API_KEY_FILE', keyFile);
    if (read instanceof ConfigError) problems.push(read.message);
    else apiKey = read;
  } else if (!apiKey) {
    problems.push('NIGHTSHIFT_API_KEY (or NIGHTSHIFT_API_KEY_FILE) is not set');
  }
  if (problems.length > 0 || !url || !apiKey) throw new ConfigError(problems.join('; '));
  return { baseUrl: url, apiKey, bearerToken };
}

/** The token the ops server asks for: `NIGHTSHIFT_UI_TOKEN`, else the file `NIGHTSHIFT_UI_TOKEN_FILE` names. */
export function uiToken(settings: Settings): string | undefined {
  const { uiToken: direct, uiTokenFile } = settings.http;
  if (direct || !uiTokenFile) return direct;
  const read = readSecretFile('NIGHTSHIFT_UI_TOKEN_FILE', uiTokenFile);
  if (read instanceof ConfigError) throw read;
  return read;
}

/** A secret mounted as a file, trimmed; the problem names the variable, never the content. */
function readSecretFile(variable: string, file: string): string | ConfigError {
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').trim();
  } catch (error) {
    return new ConfigError(
      `${variable} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return secret || new ConfigError(`${variable} names an empty file`);
}

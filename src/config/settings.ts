import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error.js';
import { INSECURE_HTTP_VARIABLE } from './plain-http.js';
import {
  DEFAULT_REDIS_URL,
  EnvironmentSchema,
  type LogLevel,
  type RedisAddress,
  splitPolicyKeys,
} from './schema.js';

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
    /** `NIGHTSHIFT_REDIS_CLUSTER_NODES`: a Redis Cluster instead of one Redis. */
    readonly clusterNodes: readonly RedisAddress[] | undefined;
    /** `NIGHTSHIFT_REDIS_SENTINELS` and the name they monitor the primary under. */
    readonly sentinel: { readonly sentinels: readonly RedisAddress[]; readonly name: string } | undefined;
    /** The ACL user (of one Redis whose URL names none, or of the cluster's or Sentinels' nodes); unset: `default`. */
    readonly username: string | undefined;
    /** The password (of one Redis whose URL holds none, or of the cluster's or Sentinels' nodes), or the file holding it. */
    readonly password: string | undefined;
    readonly passwordFile: string | undefined;
    /** The Sentinels' own password, or the file holding it. */
    readonly sentinelPassword: string | undefined;
    readonly sentinelPasswordFile: string | undefined;
    /** `NIGHTSHIFT_REDIS_TLS=true`: TLS to the cluster's nodes, or to the Sentinels and the nodes they name. */
    readonly tls: boolean;
    /** A CA bundle to trust besides the system's (a private CA). */
    readonly tlsCaFile: string | undefined;
  };
  readonly worker: {
    readonly concurrency: number;
    readonly pollIntervalMs: number;
    readonly lockMs: number;
    readonly maxStalls: number;
    /** Most targets one part of a split run holds. */
    readonly partSize: number;
    readonly shutdownGraceMs: number;
  };
  readonly scheduler: { readonly leadMs: number };
  readonly history: { readonly perJob: number; readonly days: number };
  readonly log: {
    /** Undefined: `info` for the services (`start`, `scheduler`, `worker`), `warn` for the commands people read. */
    readonly level: LogLevel | undefined;
    /** Undefined: `pretty` on a terminal, `json` otherwise. */
    readonly format: 'json' | 'pretty' | undefined;
  };
  readonly http: {
    /** Undefined: the ops server's defaults (127.0.0.1, 9464 or the next free port to 9473). */
    readonly host: string | undefined;
    readonly port: number | 'off' | undefined;
    readonly uiToken: string | undefined;
    readonly uiTokenFile: string | undefined;
    /** `NIGHTSHIFT_CONSOLE_URL`: where people open the console; notifications link to runs there. */
    readonly consoleUrl: string | undefined;
    /** The console's principals as text (YAML or JSON, token hashes only). */
    readonly consoleTokens: string | undefined;
    /** A file holding them. */
    readonly consoleTokensFile: string | undefined;
    /** `local`: on loopback without principals, the OS user may act in the console; else read-only. */
    readonly consoleActions: 'local' | 'off' | undefined;
  };
  readonly policy: {
    /** The keys policy texts in Redis are signed and checked with; `policyKeys` reads them. */
    readonly keys: readonly string[] | undefined;
    readonly keyFile: string | undefined;
    /**
     * nightshift's own variables (its settings, `NIGHTSHIFT_*`, `*_FILE`) that this installation
     * lets a policy's `${VAR}`s read; a policy reads no other of them.
     */
    readonly allowEnv: readonly string[];
  };
  readonly sinks: {
    /** `NIGHTSHIFT_SINK_COMMANDS`: the programs a sink command may run (empty: none); undefined: any. */
    readonly commands: ReadonlySet<string> | undefined;
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
    redis: {
      url: v.REDIS_URL,
      prefix: v.NIGHTSHIFT_REDIS_PREFIX,
      clusterNodes: v.NIGHTSHIFT_REDIS_CLUSTER_NODES,
      // the schema refuses Sentinels without a name
      sentinel:
        v.NIGHTSHIFT_REDIS_SENTINELS && v.NIGHTSHIFT_REDIS_SENTINEL_NAME
          ? { sentinels: v.NIGHTSHIFT_REDIS_SENTINELS, name: v.NIGHTSHIFT_REDIS_SENTINEL_NAME }
          : undefined,
      username: v.NIGHTSHIFT_REDIS_USERNAME,
      password: v.NIGHTSHIFT_REDIS_PASSWORD,
      passwordFile: v.NIGHTSHIFT_REDIS_PASSWORD_FILE,
      sentinelPassword: v.NIGHTSHIFT_REDIS_SENTINEL_PASSWORD,
      sentinelPasswordFile: v.NIGHTSHIFT_REDIS_SENTINEL_PASSWORD_FILE,
      tls: v.NIGHTSHIFT_REDIS_TLS,
      tlsCaFile: v.NIGHTSHIFT_REDIS_TLS_CA_FILE,
    },
    worker: {
      concurrency: v.NIGHTSHIFT_WORKER_CONCURRENCY,
      pollIntervalMs: v.NIGHTSHIFT_POLL_INTERVAL_MS,
      lockMs: v.NIGHTSHIFT_LOCK_MS,
      maxStalls: v.NIGHTSHIFT_MAX_STALLS,
      partSize: v.NIGHTSHIFT_RUN_PART_SIZE,
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
      consoleUrl: v.NIGHTSHIFT_CONSOLE_URL,
      consoleTokens: v.NIGHTSHIFT_CONSOLE_TOKENS,
      consoleTokensFile: v.NIGHTSHIFT_CONSOLE_TOKENS_FILE,
      consoleActions: v.NIGHTSHIFT_CONSOLE_ACTIONS,
    },
    policy: {
      keys: v.NIGHTSHIFT_POLICY_KEY,
      keyFile: v.NIGHTSHIFT_POLICY_KEY_FILE,
      allowEnv: v.NIGHTSHIFT_POLICY_ENV_ALLOW,
    },
    sinks: { commands: v.NIGHTSHIFT_SINK_COMMANDS },
    terminal: { noColor: v.NO_COLOR, dumb: v.TERM === 'dumb', ci: v.CI },
    user: v.USER,
    environment: Object.freeze({ ...env }),
  };
}

/**
 * Whether `env` allows plain `http://` beyond loopback, read as the settings read it: for the
 * policy's webhook URLs, which every process that parses a policy checks against the environment
 * its `${VAR}`s come from, so no caller can forget the opt-in or apply another one.
 */
export function insecureHttpAllowed(env: Environment): boolean {
  return EnvironmentSchema.shape[INSECURE_HTTP_VARIABLE].safeParse(env[INSECURE_HTTP_VARIABLE]).data ?? false;
}

/** The settings of a role this process starts with `variables` on top of its own environment. */
export function withVariables(settings: Settings, variables: Environment): Settings {
  return loadSettings({ ...settings.environment, ...variables });
}

/** TLS to a cluster's nodes or to Sentinels and their nodes: the system's CAs, plus `ca` if given (PEM). */
export interface RedisTls {
  readonly ca: string | undefined;
}

/** How nightshift reaches Redis: one server by URL, a Redis Cluster, or a primary Sentinels follow. */
export type RedisTopology =
  | {
      readonly kind: 'url';
      readonly url: string;
      /** Given apart from a URL that names none (`NIGHTSHIFT_REDIS_USERNAME`, `NIGHTSHIFT_REDIS_PASSWORD[_FILE]`). */
      readonly username?: string | undefined;
      readonly password?: string | undefined;
    }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly RedisAddress[];
      readonly username: string | undefined;
      readonly password: string | undefined;
      readonly tls: RedisTls | undefined;
    }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: readonly RedisAddress[];
      readonly name: string;
      readonly username: string | undefined;
      readonly password: string | undefined;
      readonly sentinelPassword: string | undefined;
      readonly tls: RedisTls | undefined;
    };

/**
 * The Redis topology the settings name (`REDIS_URL`, `NIGHTSHIFT_REDIS_CLUSTER_NODES` or
 * `NIGHTSHIFT_REDIS_SENTINELS`), passwords read from their files; undefined when none is set, for
 * the commands that work without Redis. A password file that cannot be read is a ConfigError.
 */
export function configuredRedis(settings: Settings): RedisTopology | undefined {
  const { url, clusterNodes, sentinel, username } = settings.redis;
  if (url) return { kind: 'url', url, username, password: redisPassword(settings) };
  if (clusterNodes)
    return {
      kind: 'cluster',
      nodes: clusterNodes,
      username,
      password: redisPassword(settings),
      tls: redisTls(settings),
    };
  if (sentinel)
    return {
      kind: 'sentinel',
      ...sentinel,
      username,
      tls: redisTls(settings),
      password: redisPassword(settings),
      sentinelPassword: secret(
        'NIGHTSHIFT_REDIS_SENTINEL_PASSWORD_FILE',
        settings.redis.sentinelPassword,
        settings.redis.sentinelPasswordFile,
      ),
    };
  return undefined;
}

/** The Redis a service uses: the one the settings name, else the local default. */
export function serviceRedis(settings: Settings): RedisTopology {
  return (
    configuredRedis(settings) ?? {
      kind: 'url',
      url: DEFAULT_REDIS_URL,
      username: settings.redis.username,
      password: redisPassword(settings),
    }
  );
}

function redisTls(settings: Settings): RedisTls | undefined {
  const { tls, tlsCaFile } = settings.redis;
  if (!tls) return undefined;
  if (!tlsCaFile) return { ca: undefined };
  const ca = readSecretFile('NIGHTSHIFT_REDIS_TLS_CA_FILE', tlsCaFile);
  if (ca instanceof ConfigError) throw ca;
  return { ca };
}

function redisPassword(settings: Settings): string | undefined {
  return secret('NIGHTSHIFT_REDIS_PASSWORD_FILE', settings.redis.password, settings.redis.passwordFile);
}

/** A secret given directly, else read from the file `fileVariable` names. */
function secret(
  fileVariable: string,
  direct: string | undefined,
  file: string | undefined,
): string | undefined {
  if (direct || !file) return direct;
  const read = readSecretFile(fileVariable, file);
  if (read instanceof ConfigError) throw read;
  return read;
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
  return secret('NIGHTSHIFT_UI_TOKEN_FILE', settings.http.uiToken, settings.http.uiTokenFile);
}

/**
 * The console's principals as text, and where it came from (for messages): `NIGHTSHIFT_CONSOLE_TOKENS`,
 * else the file `NIGHTSHIFT_CONSOLE_TOKENS_FILE` names; undefined when neither is set. The text holds
 * token hashes only, so a message may name the file and its entries.
 */
export function consoleTokensText(settings: Settings): { text: string; source: string } | undefined {
  const { consoleTokens, consoleTokensFile } = settings.http;
  if (consoleTokens) return { text: consoleTokens, source: 'NIGHTSHIFT_CONSOLE_TOKENS' };
  if (!consoleTokensFile) return undefined;
  try {
    return { text: readFileSync(consoleTokensFile, 'utf8'), source: consoleTokensFile };
  } catch (error) {
    throw new ConfigError(
      `NIGHTSHIFT_CONSOLE_TOKENS_FILE=${consoleTokensFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/**
 * The policy keys: `NIGHTSHIFT_POLICY_KEY`, else those in the file `NIGHTSHIFT_POLICY_KEY_FILE`
 * names (one or more, separated by commas, blanks or lines); undefined when neither is set. A
 * file that cannot be read or holds no usable key is a ConfigError naming the variable only.
 */
export function policyKeys(settings: Settings): readonly string[] | undefined {
  const { keys, keyFile } = settings.policy;
  if (keys || !keyFile) return keys;
  const read = readSecretFile('NIGHTSHIFT_POLICY_KEY_FILE', keyFile);
  if (read instanceof ConfigError) throw read;
  const split = splitPolicyKeys(read);
  if ('problem' in split)
    throw new ConfigError(`NIGHTSHIFT_POLICY_KEY_FILE names a file that ${split.problem}`);
  return split.keys;
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

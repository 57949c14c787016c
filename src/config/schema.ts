import { z } from 'zod';
import { plainHttpProblem } from './plain-http.js';

/** What a variable's text could not be read as; the message follows the variable's name. */
class Problem {
  constructor(readonly message: string) {}
}

/**
 * A variable read by `read` once set: unset and empty are the same (an empty value in a compose
 * file or a shell means "not set"), and surrounding blanks are dropped.
 */
function variable<T>(read: (text: string) => T | Problem) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T | undefined => {
      const text = raw?.trim();
      if (!text) return undefined;
      const value = read(text);
      if (!(value instanceof Problem)) return value;
      ctx.addIssue({ code: 'custom', message: value.message });
      return z.NEVER;
    });
}

/** Text taken as it is; also for secrets, whose value no message ever repeats. */
const text = () => variable((value) => value);

function positive(value: string): number | Problem {
  const number = Number(value);
  return Number.isFinite(number) && number > 0
    ? number
    : new Problem(`must be a positive number, got "${value}"`);
}

function positiveWhole(value: string): number | Problem {
  const number = Number(value);
  return Number.isSafeInteger(number) && number > 0
    ? number
    : new Problem(`must be a positive whole number, got "${value}"`);
}

const positiveNumber = (fallback: number) => variable(positive).transform((value) => value ?? fallback);

function oneOf<const T extends string>(choices: readonly T[]) {
  return variable((value) =>
    (choices as readonly string[]).includes(value)
      ? (value as T)
      : new Problem(`must be one of ${choices.join(', ')}, got "${value}"`),
  );
}

function port(value: string): number | 'off' | Problem {
  if (value.toLowerCase() === 'off') return 'off';
  return /^\d+$/.test(value) && Number(value) <= 65_535
    ? Number(value)
    : new Problem(`must be a port number (0 for any free port) or off, got "${value}"`);
}

/** Shortest policy key taken: 32 characters (`openssl rand -hex 32` makes 64), too many to guess offline from a signature. */
export const MIN_POLICY_KEY_LENGTH = 32;

/**
 * One or more policy keys, separated by commas or blanks: each one signs and each one verifies,
 * so a key change lists the old and the new key for a while. The problem gives counts and
 * lengths only, never a key.
 */
export function splitPolicyKeys(value: string): { keys: string[] } | { problem: string } {
  const keys = value.split(/[\s,]+/).filter(Boolean);
  const short = keys.findIndex((key) => key.length < MIN_POLICY_KEY_LENGTH);
  if (keys.length > 0 && short === -1) return { keys };
  return {
    problem: `must hold keys of at least ${MIN_POLICY_KEY_LENGTH} characters each (openssl rand -hex 32 makes one), separated by commas or blanks; ${keys.length === 0 ? 'none given' : `key ${short + 1} of ${keys.length} is shorter`}`,
  };
}

function policyKeyList(value: string): string[] | Problem {
  const split = splitPolicyKeys(value);
  return 'keys' in split ? split.keys : new Problem(split.problem);
}

/**
 * `none`, or absolute program paths separated by commas: the programs secret sink commands may
 * run. A relative name would depend on the PATH the command finds.
 */
function programList(value: string): ReadonlySet<string> | Problem {
  if (value.toLowerCase() === 'none') return new Set();
  const programs = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const relative = programs.find((program) => !program.startsWith('/'));
  if (programs.length === 0 || relative !== undefined)
    return new Problem(
      `must be none or absolute program paths separated by commas (e.g. /usr/local/bin/store-secret), got "${relative ?? value}"`,
    );
  return new Set(programs);
}

/**
 * The console's address as people reach it (behind a proxy, perhaps under a path): an http(s) URL
 * without query or fragment, since run pages are appended to it.
 */
function consoleUrl(value: string): string | Problem {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return new Problem(
      `must be an http:// or https:// URL such as https://nightshift.example.com, got "${value}"`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return new Problem(`must be an http:// or https:// URL, got "${value}"`);
  if (url.search !== '' || url.hash !== '')
    return new Problem(
      `must have no ?query or #fragment (run pages are added after its path), got "${value}"`,
    );
  return value.replace(/\/+$/, '');
}

/** Where a Redis node or a Sentinel listens. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/** `host:port,host:port,…`; an IPv6 host in brackets (`[fd00::1]:6379`). */
function addresses(value: string): RedisAddress[] | Problem {
  const parsed: RedisAddress[] = [];
  for (const item of value.split(',').map((part) => part.trim())) {
    const match = /^(?:\[([^\]\s]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(item);
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65_535)
      return new Problem(
        `must be host:port pairs separated by commas (e.g. 10.0.0.1:6379,10.0.0.2:6379), got "${item}"`,
      );
    parsed.push({ host: (match[1] ?? match[2]) as string, port });
  }
  return parsed;
}

/** `NAME,NAME`: environment variable names, as a policy's `${NAME}` writes them. */
function names(value: string): string[] | Problem {
  const list = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const bad = list.find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  return bad === undefined
    ? list
    : new Problem(
        `must be variable names separated by commas (e.g. NIGHTSHIFT_BEARER_TOKEN,REDIS_URL), got "${bad}"`,
      );
}

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_REDIS_PREFIX = 'nightshift';

/** How long a worker's claim on a run lasts without renewal: long enough for a busy event loop, short enough that a dead worker's run moves on soon. */
export const DEFAULT_LOCK_MS = 30_000;

/** Most targets one part of a split run holds: at a job's concurrency of 16 and 100 ms a call, a few seconds of work. */
export const DEFAULT_RUN_PART_SIZE = 500;

/** Runs a worker processes at once. */
export const DEFAULT_WORKER_CONCURRENCY = 50;

/** Interval of the shared poll runs use while waiting for workspaces' states. */
export const DEFAULT_POLL_INTERVAL_MS = 5_000;

/** How often a run may stall (its worker gone) before it fails: a run that kills every worker it reaches does not go round forever. */
export const DEFAULT_MAX_STALLS = 5;

/** How long before a tick the scheduler hands its runs to the queue. */
export const DEFAULT_SCHEDULE_LEAD_MS = 2_000;

/**
 * Every environment variable nightshift reads, by name, with its default. docs/configuration.md
 * documents exactly these: a unit test holds the two equal.
 */
export const EnvironmentSchema = z
  .object({
    NIGHTSHIFT_API_URL: variable((value) =>
      !/^https?:\/\//.test(value)
        ? new Problem('must start with http:// or https://')
        : URL.canParse(value)
          ? value
          : new Problem('is not a URL (expected e.g. https://api.example.com)'),
    ),
    NIGHTSHIFT_API_KEY: text(),
    NIGHTSHIFT_API_KEY_FILE: text(),
    NIGHTSHIFT_BEARER_TOKEN: text(),
    NIGHTSHIFT_API_TIMEOUT_MS: positiveNumber(30_000),
    NIGHTSHIFT_API_RATE_LIMIT: variable(positive),
    NIGHTSHIFT_ALLOW_INSECURE_HTTP: oneOf(['true', 'false'] as const).transform((value) => value === 'true'),
    REDIS_URL: text(),
    NIGHTSHIFT_REDIS_PREFIX: text().transform((value) => value ?? DEFAULT_REDIS_PREFIX),
    NIGHTSHIFT_REDIS_CLUSTER_NODES: variable(addresses),
    NIGHTSHIFT_REDIS_SENTINELS: variable(addresses),
    NIGHTSHIFT_REDIS_SENTINEL_NAME: text(),
    NIGHTSHIFT_REDIS_USERNAME: text(),
    NIGHTSHIFT_REDIS_PASSWORD: text(),
    NIGHTSHIFT_REDIS_PASSWORD_FILE: text(),
    NIGHTSHIFT_REDIS_SENTINEL_PASSWORD: text(),
    NIGHTSHIFT_REDIS_SENTINEL_PASSWORD_FILE: text(),
    NIGHTSHIFT_REDIS_TLS: oneOf(['true', 'false'] as const).transform((value) => value === 'true'),
    NIGHTSHIFT_REDIS_TLS_CA_FILE: text(),
    NIGHTSHIFT_WORKER_CONCURRENCY: positiveNumber(DEFAULT_WORKER_CONCURRENCY),
    NIGHTSHIFT_POLL_INTERVAL_MS: positiveNumber(DEFAULT_POLL_INTERVAL_MS),
    NIGHTSHIFT_LOCK_MS: positiveNumber(DEFAULT_LOCK_MS),
    NIGHTSHIFT_MAX_STALLS: positiveNumber(DEFAULT_MAX_STALLS),
    NIGHTSHIFT_RUN_PART_SIZE: variable(positiveWhole).transform((value) => value ?? DEFAULT_RUN_PART_SIZE),
    // 5 s: a worker is then gone within 15 s of SIGTERM (grace, BullMQ's hand-back, the rest),
    // and a run cut short loses nothing: another worker resumes it from its checkpoints
    NIGHTSHIFT_SHUTDOWN_GRACE_MS: positiveNumber(5_000),
    NIGHTSHIFT_HISTORY_PER_JOB: positiveNumber(500),
    NIGHTSHIFT_HISTORY_DAYS: positiveNumber(30),
    NIGHTSHIFT_SCHEDULE_LEAD_MS: positiveNumber(DEFAULT_SCHEDULE_LEAD_MS),
    NIGHTSHIFT_LOG_LEVEL: oneOf(LOG_LEVELS),
    NIGHTSHIFT_LOG_FORMAT: oneOf(['json', 'pretty'] as const),
    NIGHTSHIFT_HTTP_HOST: text(),
    NIGHTSHIFT_HTTP_PORT: variable(port),
    NIGHTSHIFT_UI_TOKEN: text(),
    NIGHTSHIFT_CONSOLE_URL: variable(consoleUrl),
    NIGHTSHIFT_UI_TOKEN_FILE: text(),
    NIGHTSHIFT_CONSOLE_TOKENS: text(),
    NIGHTSHIFT_CONSOLE_TOKENS_FILE: text(),
    NIGHTSHIFT_CONSOLE_ACTIONS: oneOf(['local', 'off'] as const),
    NIGHTSHIFT_POLICY_KEY: variable(policyKeyList),
    NIGHTSHIFT_POLICY_KEY_FILE: text(),
    NIGHTSHIFT_SINK_COMMANDS: variable(programList),
    NIGHTSHIFT_POLICY_ENV_ALLOW: variable(names).transform((value): readonly string[] => value ?? []),
    // https://no-color.org: any non-empty value, even blanks
    NO_COLOR: z
      .string()
      .optional()
      .transform((raw) => raw !== undefined && raw !== ''),
    // `CI=true`, `CI=1`, `CI=woodpecker`…: set and not a spelled-out no
    CI: text().transform((value) => value !== undefined && !['0', 'false'].includes(value.toLowerCase())),
    TERM: text(),
    USER: text(),
  })
  .superRefine((env, ctx) => {
    // which one wins would be a guess, and the wrong guess fails every call with a key nobody looked at
    if (env.NIGHTSHIFT_API_KEY && env.NIGHTSHIFT_API_KEY_FILE)
      ctx.addIssue({
        code: 'custom',
        message: 'NIGHTSHIFT_API_KEY and NIGHTSHIFT_API_KEY_FILE are both set; set only one of them',
      });
    const plainHttp =
      env.NIGHTSHIFT_API_URL &&
      plainHttpProblem(env.NIGHTSHIFT_API_URL, 'the API key', env.NIGHTSHIFT_ALLOW_INSECURE_HTTP);
    if (plainHttp) ctx.addIssue({ code: 'custom', message: `NIGHTSHIFT_API_URL is ${plainHttp}` });
    if (env.NIGHTSHIFT_POLICY_KEY && env.NIGHTSHIFT_POLICY_KEY_FILE)
      ctx.addIssue({
        code: 'custom',
        message: 'NIGHTSHIFT_POLICY_KEY and NIGHTSHIFT_POLICY_KEY_FILE are both set; set only one of them',
      });
    if (env.NIGHTSHIFT_CONSOLE_TOKENS && env.NIGHTSHIFT_CONSOLE_TOKENS_FILE)
      ctx.addIssue({
        code: 'custom',
        message:
          'NIGHTSHIFT_CONSOLE_TOKENS and NIGHTSHIFT_CONSOLE_TOKENS_FILE are both set; set only one of them',
      });
    for (const problem of redisTopologyProblems(env)) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * What is at odds among the Redis variables: one topology at a time (a URL, a cluster or
 * Sentinels), a Sentinel setting only with Sentinels, a secret from one source. Only names are
 * given, never a value.
 */
function redisTopologyProblems(env: {
  REDIS_URL?: string | undefined;
  NIGHTSHIFT_REDIS_CLUSTER_NODES?: readonly RedisAddress[] | undefined;
  NIGHTSHIFT_REDIS_SENTINELS?: readonly RedisAddress[] | undefined;
  NIGHTSHIFT_REDIS_SENTINEL_NAME?: string | undefined;
  NIGHTSHIFT_REDIS_USERNAME?: string | undefined;
  NIGHTSHIFT_REDIS_PASSWORD?: string | undefined;
  NIGHTSHIFT_REDIS_PASSWORD_FILE?: string | undefined;
  NIGHTSHIFT_REDIS_SENTINEL_PASSWORD?: string | undefined;
  NIGHTSHIFT_REDIS_SENTINEL_PASSWORD_FILE?: string | undefined;
  NIGHTSHIFT_REDIS_TLS?: boolean;
  NIGHTSHIFT_REDIS_TLS_CA_FILE?: string | undefined;
}): string[] {
  const problems: string[] = [];
  const topologies = (
    [
      ['REDIS_URL', env.REDIS_URL],
      ['NIGHTSHIFT_REDIS_CLUSTER_NODES', env.NIGHTSHIFT_REDIS_CLUSTER_NODES],
      ['NIGHTSHIFT_REDIS_SENTINELS', env.NIGHTSHIFT_REDIS_SENTINELS],
    ] as const
  ).flatMap(([name, value]) => (value === undefined ? [] : [name]));
  if (topologies.length > 1)
    problems.push(`${topologies.join(' and ')} are both set; set only one of them (one Redis topology)`);
  const sentinels = env.NIGHTSHIFT_REDIS_SENTINELS !== undefined;
  if (sentinels && !env.NIGHTSHIFT_REDIS_SENTINEL_NAME)
    problems.push(
      'NIGHTSHIFT_REDIS_SENTINEL_NAME is not set; NIGHTSHIFT_REDIS_SENTINELS needs the name the Sentinels monitor the primary under',
    );
  for (const name of [
    'NIGHTSHIFT_REDIS_SENTINEL_NAME',
    'NIGHTSHIFT_REDIS_SENTINEL_PASSWORD',
    'NIGHTSHIFT_REDIS_SENTINEL_PASSWORD_FILE',
  ] as const)
    if (env[name] !== undefined && !sentinels)
      problems.push(`${name} is set without NIGHTSHIFT_REDIS_SENTINELS`);
  // with REDIS_URL too (a password mounted as a file, which no URL can read), unless the URL has its own
  for (const [name, part] of [
    ['NIGHTSHIFT_REDIS_USERNAME', 'user'],
    ['NIGHTSHIFT_REDIS_PASSWORD', 'password'],
    ['NIGHTSHIFT_REDIS_PASSWORD_FILE', 'password'],
  ] as const)
    if (env[name] !== undefined && env.REDIS_URL !== undefined && urlHolds(env.REDIS_URL, part))
      problems.push(`${name} is set and REDIS_URL holds a ${part} too; give the ${part} in one place`);
  if (env.NIGHTSHIFT_REDIS_TLS && env.REDIS_URL !== undefined)
    problems.push('NIGHTSHIFT_REDIS_TLS is set with REDIS_URL; with REDIS_URL, TLS is a rediss:// URL');
  if (env.NIGHTSHIFT_REDIS_TLS_CA_FILE !== undefined && !env.NIGHTSHIFT_REDIS_TLS)
    problems.push('NIGHTSHIFT_REDIS_TLS_CA_FILE is set without NIGHTSHIFT_REDIS_TLS=true');
  for (const secret of ['NIGHTSHIFT_REDIS_PASSWORD', 'NIGHTSHIFT_REDIS_SENTINEL_PASSWORD'] as const)
    if (env[secret] !== undefined && env[`${secret}_FILE`] !== undefined)
      problems.push(`${secret} and ${secret}_FILE are both set; set only one of them`);
  return problems;
}

/** Whether a Redis URL carries its own user or password (ioredis also reads `?password=`). */
function urlHolds(url: string, part: 'user' | 'password'): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return part === 'user'
    ? parsed.username !== ''
    : parsed.password !== '' || parsed.searchParams.has('password');
}

/** The variables' names, as the schema declares them. */
export const VARIABLES = Object.keys(EnvironmentSchema.shape) as readonly string[];

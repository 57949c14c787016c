/**
 * Which values never reach a log line, and the function that takes them out. Secrets could ride
 * along inside a logged config, request or error; these rules catch them by key wherever they sit
 * up to the depth given.
 *
 * Why not pino's `redact`: pino 10 hands its paths to @pinojs/redact, which runs a leading-wildcard
 * path's redactor on every key of every line, a string or a number too, parsing each path again
 * each time: 13 µs an `api call` line against 2 µs without (a worker logs one per API call, 10,000
 * on a fleet pause). This walks only the objects a line holds and copies only what it censors.
 */

export const CENSORED = '[redacted]';

/** Keys whose value is censored at the top of a line and in the objects it holds, two levels down. */
const SECRET_KEYS = new Set(['apiKey', 'bearerToken', 'password', 'token', 'secret', 'webhookUrl']);
/** Censored at the top of a line only: a call's own `url` may carry a webhook's secret path. */
const TOP_SECRET_KEYS = new Set(['url']);
/** Headers that carry credentials, in any `headers` object down to `HEADER_DEPTH`. */
const SECRET_HEADERS = new Set(['x-api-key', 'authorization']);
/**
 * A Redis error carries the command it answered (`command.args`): AUTH's arguments are the
 * password; a cluster's error carries its last node's error one level further down.
 */
const COMMAND_KEY = 'command';
const MAX_DEPTH = 2;
const HEADER_DEPTH = 1;

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return value !== null && typeof value === 'object';
}

/**
 * `fields` with every secret it holds replaced by `[redacted]`: the same object when there is
 * none (the usual line: a few strings and numbers), a copy otherwise; `fields` is never changed.
 */
export function censor(fields: Fields): Fields {
  return censorAt(fields, 0);
}

function censorAt(fields: Fields, depth: number): Fields {
  let out: Fields | undefined;
  const set = (key: string, value: unknown) => {
    out ??= Array.isArray(fields) ? ([...fields] as unknown as Fields) : { ...fields };
    out[key] = value;
  };
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value === undefined) continue;
    if (SECRET_KEYS.has(key) || (depth === 0 && TOP_SECRET_KEYS.has(key))) {
      set(key, CENSORED);
      continue;
    }
    if (!isObject(value)) continue;
    const censored =
      key === 'headers' && depth <= HEADER_DEPTH
        ? censorHeaders(value, depth)
        : key === COMMAND_KEY && 'args' in value
          ? { ...censorAt(value, depth + 1), args: CENSORED }
          : depth < MAX_DEPTH
            ? censorAt(value, depth + 1)
            : value;
    if (censored !== value) set(key, censored);
  }
  return out ?? fields;
}

function censorHeaders(headers: Fields, depth: number): Fields {
  const inner = depth < MAX_DEPTH ? censorAt(headers, depth + 1) : headers;
  let out: Fields | undefined;
  for (const name of Object.keys(inner))
    if (SECRET_HEADERS.has(name.toLowerCase())) {
      out ??= { ...inner };
      out[name] = CENSORED;
    }
  return out ?? inner;
}

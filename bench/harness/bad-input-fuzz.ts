import type { ServerResponse } from 'node:http';
import { DEFAULT_API_KEY, DEFAULT_BEARER_TOKEN } from '../../src/sim/index.js';
import type { Prng } from '../../src/sim/random.js';
import { brokenHttp } from './bad-input-broken-http.js';
import type { ResponseSeeds } from './bad-input-responses.js';

import { caseRng, NASTY_CHARS } from './bad-input-rng.js';

/** One fuzzed answer: what the server does for it. */
export interface FuzzCase {
  index: number;
  operation: string;
  /** `http`: a well-formed response; `raw`: bytes written straight on the socket; `destroy`: no answer. */
  transport: 'http' | 'raw' | 'destroy';
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The raw bytes for `raw`. */
  raw?: Buffer;
  what: string;
}

const STATUSES = [
  200, 200, 200, 200, 200, 201, 202, 206, 301, 400, 401, 403, 404, 408, 409, 418, 429, 500, 502, 503, 504,
  599,
];
const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/html',
  'text/plain',
  'application/octet-stream',
  'application/problem+json',
  '',
];
const RETRY_AFTERS = [
  '1',
  '0',
  '-5',
  '3.5',
  '99999999999',
  'soon',
  'Wed, 21 Oct 2015 07:28:00 GMT',
  'Fri, 01 Jan 2100 00:00:00 GMT',
  '',
];
const FIELD_NAMES = [
  'Error',
  'ErrorDetails',
  'Message',
  'RequestID',
  'Result',
  'FieldName',
  'Reason',
  'Type',
  'workgroup_id',
  'workspace_id',
  'name',
  'status',
  'workspaces',
  'id',
  'username',
  'cidr',
  '__proto__',
  'constructor',
  'toString',
  'length',
];
const ERROR_TYPES = [
  'Bad-Request',
  'Not-Found',
  'Forbidden',
  'Unauthorized',
  'API-Disabled',
  'Internal-Error',
  'Quota-Exceed',
  'Unknown',
  '',
  'Something-Else',
];

function randomString(rng: Prng): string {
  const length = rng.pick([0, 1, 3, 8, 20, 200]);
  let out = '';
  for (let i = 0; i < length; i++) {
    out += rng.chance(0.8) ? String.fromCharCode(rng.int(32, 126)) : rng.pick(NASTY_CHARS);
  }
  if (rng.chance(0.05)) out += DEFAULT_API_KEY;
  if (rng.chance(0.05)) out += DEFAULT_BEARER_TOKEN;
  return out;
}

function randomJson(rng: Prng, depth: number): unknown {
  switch (rng.int(0, depth <= 0 ? 5 : 8)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 2 ** 53 + 1, -1e308, 1e-308, 42]);
    case 3:
    case 4:
      return randomString(rng);
    case 5:
      return rng.pick(ERROR_TYPES);
    case 6:
      return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth - 1));
    default: {
      const object: Record<string, unknown> = Object.create(null);
      for (let i = rng.int(0, 5); i > 0; i--) {
        object[rng.chance(0.7) ? rng.pick(FIELD_NAMES) : randomString(rng)] = randomJson(rng, depth - 1);
      }
      return object;
    }
  }
}

/** Replaces, drops or retypes one node somewhere in `value`. */
function mutateJson(value: unknown, rng: Prng): { value: unknown; what: string } {
  const steps: (string | number)[] = [];
  let parent: unknown;
  let node = value;
  while ((Array.isArray(node) && node.length > 0) || (isPlainObject(node) && Object.keys(node).length > 0)) {
    if (!rng.chance(0.7)) break;
    const key = Array.isArray(node) ? rng.int(0, node.length - 1) : rng.pick(Object.keys(node as object));
    steps.push(key);
    parent = node;
    node = (node as Record<string | number, unknown>)[key];
  }
  const choice = rng.int(0, 6);
  const replacement =
    choice === 0
      ? undefined
      : choice === 1
        ? randomJson(rng, 2)
        : choice === 2
          ? [node]
          : choice === 3
            ? typeof node === 'string'
              ? Number(node.length)
              : (JSON.stringify(node) ?? 'undefined')
            : choice === 4
              ? null
              : choice === 5
                ? Array.from({ length: rng.pick([2, 50, 2000]) }, () => node)
                : `${DEFAULT_API_KEY} echoed`;
  const what = `${steps.join('.') || '(root)'} → ${['dropped', 'random', 'wrapped', 'retyped', 'null', 'repeated', 'key echoed'][choice]}`;
  if (parent === undefined) return { value: replacement ?? null, what };
  const last = steps.at(-1) as string | number;
  if (replacement === undefined) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete (parent as Record<string, unknown>)[last as string];
  } else (parent as Record<string | number, unknown>)[last] = replacement;
  return { value, what };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function textMutation(text: string, rng: Prng): { text: string; what: string } {
  switch (rng.int(0, 5)) {
    case 0: {
      const at = rng.int(0, text.length);
      return { text: text.slice(0, at), what: `truncated at ${at}` };
    }
    case 1: {
      const bytes = Buffer.from(text);
      for (let i = rng.int(1, 4); i > 0 && bytes.length > 0; i--) {
        const at = rng.int(0, bytes.length - 1);
        bytes[at] = (bytes[at] as number) ^ rng.int(1, 255);
      }
      return { text: bytes.toString('latin1'), what: 'byte flips' };
    }
    case 2:
      return { text: `\ufeff${text}`, what: 'BOM first' };
    case 3:
      return {
        text: `${text}${rng.pick(['}', ']', ',', ' garbage', '\u0000', '{"a":1}'])}`,
        what: 'trailing garbage',
      };
    case 4:
      return { text: text.replace(/"/g, "'"), what: 'single quotes' };
    default:
      return { text: text.replace(/:/g, rng.pick(['=', ': :', ''])), what: 'colons replaced' };
  }
}

/** A fuzzed body and what was done to make it. */
interface FuzzedBody {
  body: string;
  what: string;
}

/** A real answer of `operation` with one to three of its JSON nodes mutated. */
function mutatedAnswer(rng: Prng, operation: string, real: string): FuzzedBody {
  let value: unknown = safeParse(real);
  const changes: string[] = [];
  for (let i = rng.int(1, 3); i > 0; i--) {
    const next = mutateJson(value, rng);
    value = next.value;
    changes.push(next.what);
  }
  return { body: JSON.stringify(value) ?? '', what: `real ${operation} answer, ${changes.join('; ')}` };
}

/** An object shaped somewhat like the API's envelope, each field present or not, right or not. */
function envelopeLike(rng: Prng): FuzzedBody {
  const envelope: Record<string, unknown> = Object.create(null);
  if (rng.chance(0.8)) envelope.Error = rng.chance(0.6) ? rng.chance(0.5) : randomJson(rng, 1);
  if (rng.chance(0.8))
    envelope.ErrorDetails = rng.chance(0.7)
      ? Array.from({ length: rng.int(0, 3) }, () => ({
          FieldName: randomJson(rng, 0),
          Reason: randomString(rng),
          Type: rng.pick(ERROR_TYPES),
        }))
      : randomJson(rng, 2);
  if (rng.chance(0.8)) envelope.Message = rng.chance(0.8) ? randomString(rng) : randomJson(rng, 1);
  if (rng.chance(0.8)) envelope.RequestID = rng.chance(0.8) ? `req-${rng.hex(6)}` : randomJson(rng, 1);
  if (rng.chance(0.7)) envelope.Result = randomJson(rng, 3);
  return { body: JSON.stringify(envelope), what: 'envelope-like' };
}

/** The body of a case of kind `kind` (0-99); none from 91 on, where the HTTP itself is broken. */
function fuzzBody(rng: Prng, kind: number, operation: string, real: string): FuzzedBody {
  if (kind < 40) return mutatedAnswer(rng, operation, real);
  if (kind < 50) {
    const next = textMutation(real, rng);
    return { body: next.text, what: `real ${operation} answer, ${next.what}` };
  }
  if (kind < 65) return { body: JSON.stringify(randomJson(rng, 4)) ?? '', what: 'random JSON' };
  if (kind < 80) return envelopeLike(rng);
  if (kind < 85)
    return {
      body: rng.pick([
        '',
        ' ',
        'null',
        'true',
        '0',
        '""',
        '[]',
        '{}',
        '<html>502 Bad Gateway</html>',
        'OK',
        '\u0000\u0001',
      ]),
      what: 'short body',
    };
  if (kind < 89) {
    const depth = rng.pick([100, 10_000, 200_000]);
    const body = rng.chance(0.5)
      ? `{"Error":false,"RequestID":"r","Result":${'['.repeat(depth)}${']'.repeat(depth)}}`
      : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    return { body, what: `nested ${depth} deep` };
  }
  if (kind < 91)
    return {
      body: JSON.stringify({ Error: false, RequestID: 'r', Message: 'x'.repeat(2_000_000), Result: [] }),
      what: '2 MB message',
    };
  return { body: '', what: '' };
}

function fuzzHeaders(rng: Prng): Record<string, string> {
  const headers: Record<string, string> = {};
  const type = rng.pick(CONTENT_TYPES);
  if (type) headers['content-type'] = type;
  if (rng.chance(0.3)) headers['retry-after'] = rng.pick(RETRY_AFTERS);
  if (rng.chance(0.3)) headers['x-request-id'] = randomString(rng).replace(/[^\x20-\x7e]/g, '');
  return headers;
}

/** Case `index` of the round seeded `seed`. */
export function fuzzResponse(seed: number, index: number, seeds: ResponseSeeds): FuzzCase {
  const rng = caseRng(seed ^ 0x5bd1e995, index);
  const names = [...seeds.bodies.keys()];
  const operation = rng.pick(names);
  const real = seeds.bodies.get(operation) as { status: number; body: string };
  let status = rng.chance(0.5) ? real.status : rng.pick(STATUSES);
  const kind = rng.int(0, 99);
  const { body, what } = fuzzBody(rng, kind, operation, real.body);
  const headers = fuzzHeaders(rng);

  if (kind >= 91) {
    const base: Omit<FuzzCase, 'transport' | 'what'> = {
      index,
      operation,
      status,
      headers,
      body: Buffer.alloc(0),
    };
    if (kind < 93) return { ...base, transport: 'destroy', what: 'connection destroyed before any answer' };
    return { ...base, transport: 'raw', ...brokenHttp(rng, Buffer.from(real.body), status) };
  }
  if (status === 204 || status === 304) status = 200;
  return { index, operation, transport: 'http', status, headers, body: Buffer.from(body), what };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function answer(res: ServerResponse, fuzz: FuzzCase): void {
  const socket = res.socket;
  if (fuzz.transport === 'destroy') {
    socket?.destroy();
    return;
  }
  if (fuzz.transport === 'raw') {
    socket?.end(fuzz.raw ?? Buffer.alloc(0));
    return;
  }
  try {
    res.writeHead(fuzz.status, fuzz.headers);
    res.end(fuzz.body);
  } catch {
    // a header Node refuses to send: send the body without the headers
    if (!res.headersSent) {
      res.writeHead(fuzz.status);
      res.end(fuzz.body);
    }
  }
}

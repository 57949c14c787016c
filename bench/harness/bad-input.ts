// biome-ignore-all lint/suspicious/noTemplateCurlyInString: corruptions write the policy's own ${VAR} syntax
/**
 * The chaos drill's bad-input round: corrupted policy files and fuzzed API responses.
 *
 * - Policies: each case takes one of config/policy.yaml and config/examples/*.yaml and applies
 *   one to three corruptions drawn from a seeded RNG (byte flips, deleted, duplicated or swapped
 *   lines, wrong indentation, truncation, random Unicode, swapped keys and values, odd values,
 *   odd YAML lines, deep nesting, alias bombs). `parsePolicy` must either accept the result (a
 *   harmless corruption) or throw a PolicyError whose every problem names the file, a line
 *   within it and a column within that line, with a message, and never a secret's value.
 *   Anything else is a failure, reported with the seed and case number that reproduce it
 *   (`corruptPolicy(seed, index)`).
 * - Responses: each case is one call of one of the 15 operations through the real ApiClient,
 *   against a local HTTP server answering with a fuzzed response: a real simulator answer of that
 *   operation mutated (fields dropped, retyped, nested, echoing the API key), random JSON, an
 *   envelope-like object, text that is not JSON, an empty body, odd statuses and headers, or
 *   broken HTTP (connection destroyed, wrong Content-Length, broken chunks, a garbled status
 *   line). The call must resolve or reject with an ApiError that has a boolean `retryable`,
 *   names the operation and carries neither credential; anything else is a failure, printed
 *   with the case (`fuzzResponse(seed, index, seeds)` rebuilds it).
 *
 * Used by test/chaos/bad-input.test.ts (smaller counts) and bench/chaos-drill.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { actionRegistry } from '../../jobs/index.js';
import { ApiClient, ApiError } from '../../src/api/index.js';
import { PolicyError, parsePolicy, SECRET_NAME } from '../../src/policy/index.js';
import { DEFAULT_API_KEY, DEFAULT_BEARER_TOKEN, startSimulator } from '../../src/sim/index.js';
import { Prng } from '../../src/sim/random.js';
import { brokenHttp } from './bad-input-broken-http.js';
import { type RecordedRequest, startScriptedServer } from './scripted-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The environment the policies' `${VAR}`s read; none of these values may appear in a problem. */
export const POLICY_ENV: Readonly<Record<string, string>> = {
  OPS_WEBHOOK: 'https://hooks.example.com/services/T0/B0/chaos-ops-f00d',
  SECURITY_WEBHOOK: 'https://hooks.example.com/security/chaos-sec-beef',
  DRILL_BACKUP_ID: 'bk-chaos-c0ffee',
  DEMO_BACKUP_ID: 'bk-chaos-decade',
  DEMO_UPTIME: 'Mon-Sun 00:01-00:02, Mon-Sun 00:03-00:04',
};

/** The policy files corruptions start from, by path relative to the repository. */
export function policySources(): { file: string; text: string }[] {
  const examples = readdirSync(join(ROOT, 'config/examples'))
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => `config/examples/${name}`);
  return ['config/policy.yaml', ...examples].map((file) => ({
    file,
    text: readFileSync(join(ROOT, file), 'utf8'),
  }));
}

/** One RNG per case, so any case is rebuilt from the seed and its number alone. */
function caseRng(seed: number, index: number): Prng {
  return new Prng((Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(index + 1, 0xc2b2ae35)) >>> 0);
}

const NASTY_CHARS = [
  '\u0000',
  '\u0007',
  '\t',
  '\r',
  '\u000b',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\ufeff',
  '\u200b',
  '\u200e',
  '\u202e',
  '\u2028',
  '\u2029',
  '\ufffd',
  '\ud800',
  '\udfff',
  '\u{1f600}',
  '\u0301',
  'ß',
  'İ',
  '"',
  "'",
  ':',
  '#',
  '&',
  '*',
  '!',
  '|',
  '>',
  '%',
  '@',
  '`',
  '{',
  '}',
  '[',
  ']',
  ',',
  '?',
  '-',
  '\\',
  '${',
];

const ODD_VALUES = [
  '[]',
  '{}',
  '~',
  'null',
  '-1',
  '0',
  '1e999',
  '.nan',
  '.inf',
  '0x1F',
  '0o17',
  'yes',
  'no',
  '2026-13-45',
  '!!binary aGVsbG8=',
  '!!str',
  '!custom value',
  '!!map {}',
  '*nope',
  '&anchor value',
  '"${UNSET_VARIABLE}"',
  '"${OPS_WEBHOOK}"',
  '"${OPS_WEBHOOK"',
  "'unterminated",
  '"unterminated',
  '"\\u0000"',
  '"\\uD800"',
  '|',
  '>-',
  '|+\n  text',
  '? complex',
  '[a, [b, {c: d}], e]',
  '{a: 1, a: 2}',
  '"x" "y"',
  'value # comment',
  `"${'x'.repeat(5000)}"`,
  '99999999999999999999999',
  '-0.0',
  '1_000',
  '"30m"',
  '30ms',
  '"0 20 * * * * * *"',
  '"61 25 32 13 8"',
  'Europe/Nowhere',
];

const ODD_LINES = [
  '---',
  '...',
  '%YAML 1.1',
  '%TAG ! tag:example.com,2000:',
  '- item',
  'key:',
  '  nested: value',
  '? [a, b]',
  ': c',
  '<<: *nope',
  '<<: {timezone: UTC}',
  'jobs: !!null',
  '&a [*a]',
  'base: &base {retry: {attempts: 3}}',
  'merged: {<<: *base}',
  '\t- tabbed',
  '"quoted key": value',
  'version: 2',
  'jobs:',
  'defaults: []',
  '# just a comment',
  '',
  '   ',
  'x: ${OPS_WEBHOOK}',
];

type Mutation = (text: string, rng: Prng) => { text: string; what: string };

const lineOps = (text: string) => text.split('\n');

const MUTATIONS: readonly Mutation[] = [
  (text, rng) => {
    const bytes = Buffer.from(text, 'utf8');
    const flips = rng.int(1, 4);
    const at: number[] = [];
    for (let i = 0; i < flips && bytes.length > 0; i++) {
      const index = rng.int(0, bytes.length - 1);
      bytes[index] = (bytes[index] as number) ^ rng.int(1, 255);
      at.push(index);
    }
    return { text: bytes.toString('utf8'), what: `byte flips at ${at.join(',')}` };
  },
  (text, rng) => {
    const lines = lineOps(text);
    const index = rng.int(0, lines.length - 1);
    lines.splice(index, 1);
    return { text: lines.join('\n'), what: `deleted line ${index + 1}` };
  },
  (text, rng) => {
    const lines = lineOps(text);
    const index = rng.int(0, lines.length - 1);
    lines.splice(index, 0, lines[index] as string);
    return { text: lines.join('\n'), what: `duplicated line ${index + 1}` };
  },
  (text, rng) => {
    const lines = lineOps(text);
    const index = rng.int(0, lines.length - 1);
    const line = lines[index] as string;
    const trimmed = line.trimStart();
    const indent = line.length - trimmed.length;
    const choice = rng.int(0, 3);
    const next =
      choice === 0
        ? ' '.repeat(indent + rng.int(1, 3)) + trimmed
        : choice === 1
          ? ' '.repeat(Math.max(0, indent - rng.int(1, 3))) + trimmed
          : choice === 2
            ? `\t${trimmed}`
            : trimmed;
    lines[index] = next;
    return { text: lines.join('\n'), what: `re-indented line ${index + 1}` };
  },
  (text, rng) => {
    const at = rng.int(0, text.length);
    return { text: text.slice(0, at), what: `truncated at ${at}` };
  },
  (text, rng) => {
    const count = rng.int(1, 3);
    let out = text;
    const inserted: string[] = [];
    for (let i = 0; i < count; i++) {
      const at = rng.int(0, out.length);
      const char = rng.chance(0.7)
        ? rng.pick(NASTY_CHARS)
        : String.fromCodePoint(rng.chance(0.5) ? rng.int(0x80, 0xffff) : rng.int(0x10000, 0x10ffff));
      out = out.slice(0, at) + char + out.slice(at);
      inserted.push(`U+${(char.codePointAt(0) ?? 0).toString(16)}@${at}`);
    }
    return { text: out, what: `inserted ${inserted.join(' ')}` };
  },
  (text, rng) => {
    const lines = lineOps(text);
    const candidates = lines.flatMap((line, index) => (/^\s*[\w-]+:\s+\S/.test(line) ? [index] : []));
    if (candidates.length === 0) return { text, what: 'no key to swap' };
    const index = rng.pick(candidates);
    const line = lines[index] as string;
    const match = /^(\s*)([\w-]+):\s+(.*)$/.exec(line);
    if (match) lines[index] = `${match[1]}${match[3]}: ${match[2]}`;
    return { text: lines.join('\n'), what: `swapped key and value on line ${index + 1}` };
  },
  (text, rng) => {
    const lines = lineOps(text);
    const a = rng.int(0, lines.length - 1);
    const b = rng.int(0, lines.length - 1);
    [lines[a], lines[b]] = [lines[b] as string, lines[a] as string];
    return { text: lines.join('\n'), what: `swapped lines ${a + 1} and ${b + 1}` };
  },
  (text, rng) => {
    const lines = lineOps(text);
    const candidates = lines.flatMap((line, index) => (/^\s*-?\s*[\w-]+:\s*\S/.test(line) ? [index] : []));
    if (candidates.length === 0) return { text, what: 'no value to replace' };
    const index = rng.pick(candidates);
    const value = rng.pick(ODD_VALUES);
    lines[index] = (lines[index] as string).replace(
      /^(\s*-?\s*[\w-]+:\s*).*$/,
      (_, head: string) => head + value,
    );
    return {
      text: lines.join('\n'),
      what: `line ${index + 1} value → ${JSON.stringify(value.slice(0, 40))}`,
    };
  },
  (text, rng) => {
    const lines = lineOps(text);
    const index = rng.int(0, lines.length);
    const indent = ' '.repeat(rng.pick([0, 0, 2, 4, 6]));
    const line = indent + rng.pick(ODD_LINES);
    lines.splice(index, 0, line);
    return { text: lines.join('\n'), what: `inserted ${JSON.stringify(line)} before line ${index + 1}` };
  },
  (text, rng) => {
    const depth = rng.pick([70, 500, 5000]);
    const flow = rng.chance(0.5);
    const bomb = flow
      ? `deep: ${'['.repeat(depth)}x${']'.repeat(depth)}`
      : `deep:\n${Array.from({ length: Math.min(depth, 400) }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n')} x`;
    const lines = lineOps(text);
    const index = rng.int(0, lines.length);
    lines.splice(index, 0, bomb);
    return {
      text: lines.join('\n'),
      what: `${flow ? 'flow' : 'block'} nesting ${depth} deep before line ${index + 1}`,
    };
  },
  (text, rng) => {
    const levels = rng.int(3, 7);
    const bomb = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < levels; i++)
      bomb.push(
        `a${i}: &a${i} [${Array(9)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const lines = lineOps(text);
    const index = rng.int(0, lines.length);
    lines.splice(index, 0, ...bomb);
    return { text: lines.join('\n'), what: `alias bomb of ${levels} levels before line ${index + 1}` };
  },
];

export interface CorruptPolicy {
  source: string;
  text: string;
  mutations: string[];
}

/** Case `index` of the round seeded `seed`: a source policy and the corruptions applied to it. */
export function corruptPolicy(
  seed: number,
  index: number,
  sources: readonly { file: string; text: string }[] = policySources(),
): CorruptPolicy {
  const rng = caseRng(seed, index);
  const source = rng.pick(sources);
  let text = source.text;
  const mutations: string[] = [];
  const count = rng.int(1, 3);
  for (let i = 0; i < count; i++) {
    const mutate = rng.pick(MUTATIONS);
    const next = mutate(text, rng);
    text = next.text;
    mutations.push(next.what);
  }
  return { source: source.file, text, mutations };
}

export type PolicyVerdict =
  | { kind: 'parsed' }
  | { kind: 'rejected'; problems: number }
  | { kind: 'failure'; why: string };

/** Whether parsing `text` behaves: a policy, or a PolicyError with every problem located inside the file. */
export function checkPolicy(text: string, file: string): PolicyVerdict {
  try {
    parsePolicy(text, file, { registry: actionRegistry, env: POLICY_ENV });
    return { kind: 'parsed' };
  } catch (error) {
    if (!(error instanceof PolicyError)) {
      const e = error as Error;
      return { kind: 'failure', why: `threw ${e?.name ?? typeof error}: ${e?.message ?? String(error)}` };
    }
    if (error.problems.length === 0) return { kind: 'failure', why: 'PolicyError without any problem' };
    // lines as the parser counts them (LF; a CR is part of its line); a column may point just past a line's end
    const lines = text.split('\n');
    for (const problem of error.problems) {
      const where = `${problem.line}:${problem.col}`;
      if (problem.file !== file)
        return { kind: 'failure', why: `problem in file "${problem.file}": ${problem.message}` };
      if (!Number.isInteger(problem.line) || problem.line < 1 || problem.line > lines.length)
        return {
          kind: 'failure',
          why: `line out of the file (${lines.length} lines) at ${where}: ${problem.message}`,
        };
      const length = (lines[problem.line - 1] as string).length;
      if (!Number.isInteger(problem.col) || problem.col < 1 || problem.col > length + 1)
        return {
          kind: 'failure',
          why: `column out of line ${problem.line} (${length} chars) at ${where}: ${problem.message}`,
        };
      if (typeof problem.message !== 'string' || problem.message.trim() === '')
        return { kind: 'failure', why: `problem without a message at ${where}` };
    }
    // a value from a secret (the webhooks, by their names) is never in a message; others may be
    for (const [name, secret] of Object.entries(POLICY_ENV)) {
      if (SECRET_NAME.test(name) && error.message.includes(secret))
        return { kind: 'failure', why: `a secret's value is in the message: ${error.message}` };
    }
    return { kind: 'rejected', problems: error.problems.length };
  }
}

export interface PolicyRoundReport {
  total: number;
  parsed: number;
  rejected: number;
  problems: number;
  failures: { index: number; source: string; mutations: string[]; why: string }[];
  slowest: { index: number; ms: number };
  durationMs: number;
}

export function runPolicyRound(count: number, seed: number): PolicyRoundReport {
  const sources = policySources();
  for (const source of sources) {
    const verdict = checkPolicy(source.text, source.file);
    if (verdict.kind !== 'parsed')
      throw new Error(`${source.file} does not parse before corruption: ${JSON.stringify(verdict)}`);
  }
  const report: PolicyRoundReport = {
    total: count,
    parsed: 0,
    rejected: 0,
    problems: 0,
    failures: [],
    slowest: { index: -1, ms: 0 },
    durationMs: 0,
  };
  const began = performance.now();
  for (let index = 0; index < count; index++) {
    const corrupt = corruptPolicy(seed, index, sources);
    const started = performance.now();
    const verdict = checkPolicy(corrupt.text, corrupt.source);
    const ms = performance.now() - started;
    if (ms > report.slowest.ms) report.slowest = { index, ms };
    if (verdict.kind === 'parsed') report.parsed++;
    else if (verdict.kind === 'rejected') {
      report.rejected++;
      report.problems += verdict.problems;
    } else
      report.failures.push({ index, source: corrupt.source, mutations: corrupt.mutations, why: verdict.why });
  }
  report.durationMs = performance.now() - began;
  return report;
}

// ---- API responses ------------------------------------------------------------------------

type Operation = (api: ApiClient) => Promise<unknown>;

/** The 15 operations, with ids that exist in the simulator's seeded 2×2 fleet (see `recordSeeds`). */
interface FleetIds {
  wg: string;
  ws: string;
  stoppedWs: string;
  stoppedWg: string;
  backup: string;
  db: string;
  cp: string;
  user: string;
}

function operations(ids: FleetIds): [string, Operation][] {
  return [
    ['restoreBackup', (c) => c.restoreBackup(ids.wg, ids.ws, ids.backup)],
    ['deleteBackup', (c) => c.deleteBackup(ids.wg, ids.ws, ids.backup)],
    [
      'createDbUser',
      (c) => c.createDbUser(ids.wg, ids.ws, { username: 'chaos_user', password: 'Chaos-pass-123!' }),
    ],
    [
      'updateDbUserPassword',
      (c) => c.updateDbUserPassword(ids.wg, ids.ws, { username: ids.user, password: 'Chaos-pass-456!' }),
    ],
    ['updateCloudProvider', (c) => c.updateCloudProvider(ids.cp, { name: 'chaos-renamed' })],
    ['getCloudProvider', (c) => c.getCloudProvider(ids.cp)],
    ['upgradeCloudProvider', (c) => c.upgradeCloudProvider(ids.cp, {})],
    ['listWorkgroups', (c) => c.listWorkgroups()],
    ['listAllowedIps', (c) => c.listAllowedIps(ids.wg)],
    ['checkCurrentIp', (c) => c.checkCurrentIp(ids.wg)],
    ['disableAllowList', (c) => c.disableAllowList(ids.wg)],
    ['listOrgUsers', (c) => c.listOrgUsers()],
    ['resumeWorkspace', (c) => c.resumeWorkspace(ids.stoppedWg, ids.stoppedWs)],
    ['pauseWorkspace', (c) => c.pauseWorkspace(ids.wg, ids.ws)],
    ['deleteDatabase', (c) => c.deleteDatabase(ids.wg, ids.db)],
  ];
}

/** A real answer of each operation, as the simulator gives it: what the mutations start from. */
export interface ResponseSeeds {
  ids: FleetIds;
  /** Operation name → { status, body } of a real answer. */
  bodies: Map<string, { status: number; body: string }>;
}

/**
 * Calls every operation once through a recording proxy in front of a simulator (2 workgroups ×
 * 2 workspaces, seed 1) and keeps each answer's status and body.
 */
export async function recordSeeds(): Promise<ResponseSeeds> {
  const sim = await startSimulator({
    port: 0,
    seed: 1,
    fleet: { workgroups: 2, workspacesPerWorkgroup: 3 },
    transitionMs: 10,
  });
  const proxy = await startScriptedServer();
  try {
    const state = sim.state;
    const active = state.workspaces.find((ws) => ws.status === 'Active') ?? state.workspaces[0];
    const stopped = state.workspaces.find((ws) => ws.status === 'Stopped') ?? state.workspaces[1];
    if (!active || !stopped) throw new Error('the seeded fleet has no workspace');
    const backup = state.backups.find((b) => b.workspace_id === active.workspace_id);
    const user = state.dbUsers.find((u) => u.workspace_id === active.workspace_id);
    const wg = state.workgroups.find((w) => w.workgroup_id === active.workgroup_id);
    const db = state.databases.find((d) => d.workgroup_id === active.workgroup_id && d.name === 'archive');
    const ids: FleetIds = {
      wg: active.workgroup_id,
      ws: active.workspace_id,
      stoppedWg: stopped.workgroup_id,
      stoppedWs: stopped.workspace_id,
      backup: backup?.backup_id ?? 'bk-none',
      db: db?.database_id ?? 'db-none',
      cp: wg?.cloud_provider_id ?? 'cp-none',
      user: user?.username ?? 'nobody',
    };
    let last = { status: 0, body: '' };
    proxy.reply((req, res) => {
      void fetch(sim.url + req.url, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(
            ([k, v]) => typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k),
          ),
        ) as Record<string, string>,
        body: req.body === '' ? undefined : req.body,
      }).then(async (answer) => {
        last = { status: answer.status, body: await answer.text() };
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(last.body);
      });
    });
    const client = new ApiClient({
      baseUrl: proxy.url,
      apiKey: DEFAULT_API_KEY,
      bearerToken: DEFAULT_BEARER_TOKEN,
    });
    const bodies = new Map<string, { status: number; body: string }>();
    for (const [name, call] of operations(ids)) {
      await call(client).catch(() => undefined);
      bodies.set(name, last);
    }
    await client.close();
    return { ids, bodies };
  } finally {
    await proxy.close();
    await sim.close();
  }
}

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

function answer(res: ServerResponse, fuzz: FuzzCase): void {
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

export interface ResponseRoundReport {
  total: number;
  resolved: number;
  apiErrors: number;
  /** ApiError types seen, with counts. */
  types: Record<string, number>;
  failures: {
    index: number;
    operation: string;
    what: string;
    status: number;
    transport: string;
    why: string;
    body: string;
  }[];
  durationMs: number;
}

const CLIENT_TIMEOUT_MS = 3_000;

/** Runs `count` fuzzed answers through the real ApiClient, `lanes` at a time (one client each). */
export async function runResponseRound(count: number, seed: number, lanes = 8): Promise<ResponseRoundReport> {
  const seeds = await recordSeeds();
  const server = await startScriptedServer();
  const current = new Map<string, FuzzCase>();
  server.reply((req: RecordedRequest, res) => {
    const lane = /^\/(lane\d+)\//.exec(req.url)?.[1] ?? '';
    const fuzz = current.get(lane);
    if (!fuzz) {
      res.writeHead(500);
      res.end('no case');
      return;
    }
    answer(res, fuzz);
  });
  const byName = new Map(operations(seeds.ids));
  const report: ResponseRoundReport = {
    total: count,
    resolved: 0,
    apiErrors: 0,
    types: {},
    failures: [],
    durationMs: 0,
  };
  const began = performance.now();
  let next = 0;
  const run = async (lane: string) => {
    const client = new ApiClient({
      baseUrl: `${server.url}/${lane}`,
      apiKey: DEFAULT_API_KEY,
      bearerToken: DEFAULT_BEARER_TOKEN,
      timeoutMs: CLIENT_TIMEOUT_MS,
    });
    try {
      while (next < count) {
        const index = next++;
        const fuzz = fuzzResponse(seed, index, seeds);
        current.set(lane, fuzz);
        server.requests.length = 0;
        const started = performance.now();
        const call = byName.get(fuzz.operation) as Operation;
        const why = await call(client).then(
          () => {
            report.resolved++;
            return undefined;
          },
          (error: unknown) => {
            if (!(error instanceof ApiError)) {
              const e = error as Error;
              return `rejected with ${e?.name ?? typeof error}: ${String(e?.message ?? error).slice(0, 300)}`;
            }
            report.apiErrors++;
            report.types[error.type] = (report.types[error.type] ?? 0) + 1;
            if (typeof error.retryable !== 'boolean') return 'ApiError without a boolean retryable';
            if (error.operation !== fuzz.operation) return `ApiError names ${error.operation}`;
            const shown = `${error.message} ${JSON.stringify(error.toJSON())}`;
            if (shown.includes(DEFAULT_API_KEY) || shown.includes(DEFAULT_BEARER_TOKEN))
              return `a credential in the ApiError: ${error.message.slice(0, 300)}`;
            return undefined;
          },
        );
        const ms = performance.now() - started;
        const slow = ms > CLIENT_TIMEOUT_MS + 2_000 ? `took ${Math.round(ms)} ms` : undefined;
        if (why || slow)
          report.failures.push({
            index,
            operation: fuzz.operation,
            what: fuzz.what,
            status: fuzz.status,
            transport: fuzz.transport,
            why: why ?? (slow as string),
            body: (fuzz.raw ?? fuzz.body).toString('latin1').slice(0, 200),
          });
      }
    } finally {
      await client.close();
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, (_, i) => run(`lane${i}`)));
  } finally {
    await server.close();
  }
  report.durationMs = performance.now() - began;
  return report;
}

export interface BadInputReport {
  policies: PolicyRoundReport;
  responses: ResponseRoundReport;
  ok: boolean;
  /** Markdown: a table of both rounds and every failure with what reproduces it. */
  text: string;
}

export async function runBadInputRound({
  policies = 1_000,
  responses = 10_000,
  seed = 1,
}: {
  policies?: number;
  responses?: number;
  seed?: number;
} = {}): Promise<BadInputReport> {
  const policyReport = runPolicyRound(policies, seed);
  const responseReport = await runResponseRound(responses, seed);
  const lines = [
    `Bad-input round, seed ${seed}:`,
    '',
    '| input | cases | outcome | failures | time |',
    '|---|---|---|---|---|',
    `| corrupted policy files | ${policyReport.total} | ${policyReport.rejected} rejected with ${policyReport.problems} located problems, ${policyReport.parsed} still valid | ${policyReport.failures.length} | ${(policyReport.durationMs / 1000).toFixed(1)} s (slowest case ${policyReport.slowest.ms.toFixed(0)} ms, #${policyReport.slowest.index}) |`,
    `| fuzzed API responses | ${responseReport.total} | ${responseReport.resolved} parsed, ${responseReport.apiErrors} ApiError (${Object.entries(
      responseReport.types,
    )
      .sort((a, b) => b[1] - a[1])
      .map(([type, n]) => `${type || '(no type)'} ${n}`)
      .join(
        ', ',
      )}) | ${responseReport.failures.length} | ${(responseReport.durationMs / 1000).toFixed(1)} s |`,
  ];
  for (const failure of policyReport.failures.slice(0, 20))
    lines.push(
      `- policy case ${failure.index} (seed ${seed}, ${failure.source}; ${failure.mutations.join('; ')}): ${failure.why}`,
    );
  for (const failure of responseReport.failures.slice(0, 20))
    lines.push(
      `- response case ${failure.index} (seed ${seed}, ${failure.operation}, ${failure.transport} ${failure.status}, ${failure.what}): ${failure.why}; body ${JSON.stringify(failure.body)}`,
    );
  return {
    policies: policyReport,
    responses: responseReport,
    ok: policyReport.failures.length === 0 && responseReport.failures.length === 0,
    text: lines.join('\n'),
  };
}

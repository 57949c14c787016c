// biome-ignore-all lint/suspicious/noTemplateCurlyInString: corruptions write the policy's own ${VAR} syntax
/**
 * The bad-input round's corrupted policy files: each case takes one of config/policy.yaml and
 * config/examples/*.yaml and applies one to three corruptions drawn from a seeded RNG; `parsePolicy`
 * must accept the result or throw a PolicyError whose every problem is located (bad-input.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { actionRegistry } from '../../jobs/index.js';
import { PolicyError, parsePolicy, SECRET_NAME } from '../../src/policy/index.js';
import type { Prng } from '../../src/sim/random.js';
import { caseRng, NASTY_CHARS } from './bad-input-rng.js';

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

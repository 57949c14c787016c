import { readFile } from 'node:fs/promises';
import { didYouMean, type PolicyEnv } from '../policy/index.js';
import { readYaml } from '../policy/yaml/index.js';
import type { PolicyStore } from '../store/index.js';
import { UsageError } from './exit.js';
import { invalidPolicy } from './policy-io.js';

/** A policy a command checks a job name against. */
export interface KnownPolicy {
  readonly known: true;
  /** What `suspendableNames` read from it. */
  readonly names: ReadonlySet<string>;
  /** How a message names it: the file, or the policy the schedulers run with its sha, when and where it was loaded. */
  readonly source: string;
}

/** No policy to check against, and why (to finish a sentence). */
export interface NoPolicy {
  readonly known: false;
  readonly why: string;
}

/**
 * Every `${VAR}` reads as empty: only names are read, and the variables are the workers'. This
 * CLI may lack them, and never reads (so can never print) the values of those it has.
 */
const NO_VARIABLES: PolicyEnv = new Proxy<PolicyEnv>({}, { get: () => '' });

function isMap(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The names a policy text defines that can be suspended and run: its jobs and windows. Read from the YAML
 * alone, without checking the rest of the policy or interpolating anything, so a policy that needs
 * variables this process lacks still answers. Throws a UsageError (`invalid-policy`) only when the
 * text is no YAML at all.
 */
export function suspendableNames(text: string, file: string): ReadonlySet<string> {
  const { jobs, windows } = namesIn(text, file);
  return new Set([...jobs, ...windows]);
}

/** The names of the jobs and of the windows in a policy's text (see `suspendableNames`). */
function namesIn(text: string, file: string): { jobs: string[]; windows: string[] } {
  const source = readYaml(text, file, NO_VARIABLES);
  if (source.value === undefined) throw invalidPolicy(source.problems);
  const root = isMap(source.value) ? source.value : {};
  return {
    jobs: isMap(root.jobs) ? Object.keys(root.jobs) : [],
    windows: isMap(root.windows) ? Object.keys(root.windows) : [],
  };
}

/** The names of the windows in a policy's text (read as `suspendableNames` reads it). */
export function windowNames(text: string, file: string): ReadonlySet<string> {
  return new Set(namesIn(text, file).windows);
}

/** A policy's text, as `--policy FILE` gives it or the schedulers run it. */
export interface PolicyText {
  readonly known: true;
  readonly text: string;
  /** The name its problems are placed in: the file, or `policy <sha>`. */
  readonly file: string;
  /** How a message names it (see `KnownPolicy.source`). */
  readonly source: string;
}

/**
 * The text of the policy given as `--policy FILE`, else of the one the schedulers run (the one a
 * scheduler last loaded, recorded in Redis), else why there is none.
 */
export async function policyTextInForce(
  store: PolicyStore,
  file: string | undefined,
  redisPrefix: string,
): Promise<PolicyText | NoPolicy> {
  if (file !== undefined) {
    try {
      return { known: true, text: await readFile(file, 'utf8'), file, source: file };
    } catch (error) {
      throw invalidPolicy([
        { file, line: 1, col: 1, message: `cannot read the policy file: ${(error as Error).message}` },
      ]);
    }
  }
  const current = await store.current();
  if (!current)
    return {
      known: false,
      why: `no scheduler has recorded the policy it runs in this Redis under prefix "${redisPrefix}"`,
    };
  const source = `the policy the schedulers run (sha ${current.sha.slice(0, 12)}, loaded ${current.loadedAt} on ${current.host})`;
  const { stored } = current;
  if (stored === undefined) return { known: false, why: `${source} has expired from Redis` };
  // Read, never run: without a key this command cannot tell a forged policy in force from the
  // real one, and anyone who can forge it can write a suspension or a hold directly anyway.
  if (stored.verdict !== 'signed' && stored.verdict !== 'unchecked')
    return { known: false, why: `${source} is not signed with this process's NIGHTSHIFT_POLICY_KEY` };
  return { known: true, text: stored.text, file: `policy ${current.sha.slice(0, 12)}`, source };
}

/**
 * The policy given as `--policy FILE`, else the one the schedulers run, else why there is none:
 * the names of its jobs and windows.
 */
export async function policyInForce(
  store: PolicyStore,
  file: string | undefined,
  redisPrefix: string,
): Promise<KnownPolicy | NoPolicy> {
  const policy = await policyTextInForce(store, file, redisPrefix);
  if (!policy.known) return policy;
  return { known: true, names: suspendableNames(policy.text, policy.file), source: policy.source };
}

/**
 * The usage error for a name that `policy` does not have (or that no known policy can vouch for):
 * `<lead>no job or window "<name>" in <source>; did you mean "<closest of candidates>"?<hint>`. Exit 2, code
 * `unknown-job`, or `no-policy` when no policy is known.
 */
export function unknownName(
  name: string,
  policy: KnownPolicy | NoPolicy,
  {
    lead = '',
    candidates = policy.known ? policy.names : [],
    hint = '',
  }: { lead?: string; candidates?: Iterable<string>; hint?: string } = {},
): UsageError {
  const where = policy.known
    ? `no job or window "${name}" in ${policy.source}`
    : `no policy tells whether "${name}" is a job or window (${policy.why}; --policy FILE names one)`;
  const suggestion = didYouMean(name, candidates);
  return new UsageError(
    `${lead}${where}${suggestion === undefined ? '' : `; did you mean "${suggestion}"?`}${hint}`,
    { kind: policy.known ? 'unknown-job' : 'no-policy', suggestion },
  );
}

/** Throws `unknownName` unless `name` is one of `policy.names`; `hint` ends the message (what else to do). */
export function checkSuspendable(name: string, policy: KnownPolicy, hint = ''): void {
  if (!policy.names.has(name)) throw unknownName(name, policy, { hint });
}

import { actionRegistry } from '../../jobs/index.js';
import { sinkProgram } from '../../jobs/support/secret-sink.js';
import type { Settings } from '../config/index.js';
import { type SinkCommandAllowlist, sinkProgramRefusal } from '../engine/index.js';
import {
  type ActionCatalog,
  checkPolicyFile,
  formatProblem,
  hideSecrets,
  isWarning,
  type JobParameters,
  type Policy,
  type PolicyCheck,
  type PolicyJob,
  type PolicyProblem,
  type PolicyVariables,
  sortProblems,
} from '../policy/index.js';
import type { Suspension } from '../store/index.js';
import { EXIT, formatUsageError, UsageError } from './exit.js';

/**
 * What the policy commands touch outside themselves, so tests can fix the clock and capture output.
 * Bad usage goes through commander's own error path (exit 2 via main); an invalid policy is
 * printed in full and only sets the exit code, so every problem is shown.
 */
export interface PolicyCommandDeps extends PolicyVariables {
  readonly registry: ActionCatalog;
  readonly now: () => Date;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly setExitCode: (code: number) => void;
  /**
   * Suspensions kept in Redis (`nightshift suspend`), or undefined when no Redis is configured.
   * Rejects when Redis is configured but cannot be read.
   */
  readonly suspensions: () => Promise<ReadonlyMap<string, Suspension> | undefined>;
  /** The programs a sink command may run on this machine (`NIGHTSHIFT_SINK_COMMANDS`); undefined: any. */
  readonly sinkCommands: SinkCommandAllowlist;
}

/**
 * What a policy's `${VAR}`s may read: the variables `settings` were read from, nightshift's own
 * only as far as NIGHTSHIFT_POLICY_ENV_ALLOW lets them.
 */
export function policyVariables(settings: Settings): PolicyVariables {
  return { env: settings.environment, allowEnv: settings.policy.allowEnv };
}

/** `${VAR}`s resolve in the variables `settings` were read from. */
export function policyCommandDeps(
  settings: Settings,
  overrides: Partial<PolicyCommandDeps> = {},
): PolicyCommandDeps {
  return {
    registry: actionRegistry,
    ...policyVariables(settings),
    now: () => new Date(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    setExitCode: (code) => {
      process.exitCode = code;
    },
    suspensions: async () => undefined,
    sinkCommands: settings.sinks.commands,
    ...overrides,
  };
}

/**
 * Loads a policy, or throws a UsageError (`invalid-policy`) carrying every problem. Warnings alone
 * do not stop the command: they are printed on stderr (`file:line:col: warning: message`). With
 * `only`, the command runs that one job or window: the others' unset `${VAR}`s are warnings; with
 * `parameters`, that job's `with:` takes them (`run --with`), checked as the file's own values.
 */
export async function loadPolicy(
  file: string,
  deps: PolicyCommandDeps,
  { only, parameters }: { only?: string; parameters?: JobParameters } = {},
): Promise<Policy> {
  const check = await checkPolicyFile(file, {
    registry: deps.registry,
    env: deps.env,
    allowEnv: deps.allowEnv,
    now: deps.now(),
    only,
    parameters,
  });
  const { problems, policy } = withSinkCommands(check, deps.sinkCommands);
  if (!policy) throw invalidPolicy(problems);
  const warnings = problems.filter(isWarning);
  if (warnings.length > 0) deps.stderr(`${warnings.map(formatProblem).join('\n')}\n`);
  return policy;
}

/**
 * Every job's secret sink command whose program this machine does not allow
 * (`NIGHTSHIFT_SINK_COMMANDS`), as a problem at the program in the file: a policy refused where
 * the variable is known, before a worker refuses the command when the sink is used.
 */
export function sinkCommandProblems(policy: Policy, allowed: SinkCommandAllowlist): PolicyProblem[] {
  return policy.jobs.flatMap((job) => {
    const sink = sinkProgram(job.params);
    const refusal = sink && sinkProgramRefusal(sink.program, allowed);
    if (!sink || !refusal) return [];
    const path = ['jobs', job.name, 'with', ...sink.path];
    // a program read from a secret variable is shown as its ${NAME}
    const shown = JSON.stringify(hideSecrets(job.secrets)(sink.program));
    return [
      {
        ...policy.locate(path),
        message: `${path.join('.')}: the sink command's program ${shown} may not run here: ${refusal}`,
      },
    ];
  });
}

/** `check` with the refused sink commands among its problems; such a policy is not usable here. */
export function withSinkCommands(check: PolicyCheck, allowed: SinkCommandAllowlist): PolicyCheck {
  const refused = check.policy ? sinkCommandProblems(check.policy, allowed) : [];
  if (refused.length === 0) return check;
  return { problems: sortProblems([...check.problems, ...refused]), policy: undefined };
}

/** The usage error for a policy with problems. */
export function invalidPolicy(problems: readonly PolicyProblem[]): UsageError {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return new UsageError(`invalid policy (${count})`, { kind: 'invalid-policy', problems });
}

/** Loads a policy; on problems prints them (`file:line:col: message`), sets exit code 2 and returns undefined. */
export async function loadOrReport(
  file: string,
  deps: PolicyCommandDeps,
  options: { only?: string } = {},
): Promise<Policy | undefined> {
  try {
    return await loadPolicy(file, deps, options);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    deps.stderr(formatUsageError(error));
    deps.setExitCode(EXIT.usage);
    return undefined;
  }
}

/** `suspended since <when> until <end> by <who>: <why>`, each part only when known. */
export function describeSuspension(record: Suspension): string {
  return [
    `suspended since ${record.since}`,
    record.until && `until ${record.until}`,
    record.by && `by ${record.by}`,
    record.reason && `: ${record.reason}`,
  ]
    .filter(Boolean)
    .join(' ')
    .replace(' :', ':');
}

/** `dev`, `inline(dev-*)`, or `-` for an action that takes no target. */
export function describeTarget(job: PolicyJob): string {
  if (!job.target) return '-';
  return job.target.name ?? `inline(${job.target.selector.workgroups.join(',')})`;
}

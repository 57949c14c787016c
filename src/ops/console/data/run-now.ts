import { type Origin, queueManualRun } from '../../../control/index.js';
import {
  formatProblem,
  isWarning,
  PARAMETER_NAME,
  type PolicyJob,
  type RunParameters,
} from '../../../policy/index.js';
import type { CurrentPolicy } from '../../../store/index.js';
import type { ConsoleRunNow } from './sources.js';

/** The most parameters one form gives: a job's `with:` has a handful. */
const MAX_PARAMETERS = 50;
/** The most problems a refusal lists; the count of the rest follows. */
const MAX_PROBLEMS_SHOWN = 5;

/** The run-now form as sent: every field text, empty when absent. */
export interface RunNowForm {
  /** `key=value` lines. */
  readonly with: string;
  readonly reason: string;
  readonly dryRun: boolean;
}

/** The run-now form of a request's body; a field that is not text is empty. */
export function runNowForm(body: unknown): RunNowForm {
  const form = (body ?? {}) as Record<string, unknown>;
  const text = (name: string, max: number) => {
    const value = form[name];
    return typeof value === 'string' ? value.slice(0, max) : '';
  };
  return {
    with: text('with', 8_000),
    reason: text('reason', 1_000).trim(),
    dryRun: text('dryRun', 10) !== '',
  };
}

/**
 * The parameters of a run-now form: one `key=value` a line, as `nightshift run --with` takes each
 * (the value as typed; blank lines and the spaces around a line, its key and its value do not
 * count), or what is wrong with the first line that is not one. The job's action checks the rest
 * as the policy is read with them.
 */
export function parametersFromForm(text: string): RunParameters | string {
  const parameters: RunParameters = {};
  const seenAt = new Map<string, number>();
  const lines = text.split(/\r\n|\r|\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const at = `parameters, line ${index + 1}`;
    const split = line.indexOf('=');
    if (split === -1) return `${at} "${line}": expected key=value, e.g. backupId=bk-1234`;
    const key = line.slice(0, split).trim();
    if (!PARAMETER_NAME.test(key))
      return `${at} "${line}": "${key}" is not a parameter's name (a key of the job's "with:": a letter, then letters, digits, "_" and "-"; a map is given whole, as in expect={ vertices: 5 })`;
    const before = seenAt.get(key);
    if (before !== undefined) return `${at}: ${key} is given twice (lines ${before} and ${index + 1})`;
    if (seenAt.size === MAX_PARAMETERS) return `${at}: more than ${MAX_PARAMETERS} parameters`;
    seenAt.set(key, index + 1);
    parameters[key] = line.slice(split + 1).trim();
  }
  return parameters;
}

/** Why this console offers no run-now: a run it queued would not be signed, and every worker would refuse it. */
export const RUN_NOW_UNAVAILABLE =
  'this console cannot queue runs: its process holds no policy key (NIGHTSHIFT_POLICY_KEY) to sign them with';

/** The policy in force's text, or why there is none to run. */
function inForceText(current: CurrentPolicy | undefined): { sha: string; text: string } | string {
  if (!current) return 'no scheduler has recorded the policy it runs in this Redis: there is no job to run';
  if (current.text !== undefined) return { sha: current.sha, text: current.text };
  return current.stored === undefined
    ? `policy ${current.sha.slice(0, 12)} has expired from Redis`
    : `policy ${current.sha.slice(0, 12)} is not signed with this process's NIGHTSHIFT_POLICY_KEY: a run of it would be refused`;
}

/** The job of the policy as checked, or why it cannot be run now. */
function runnableJob(jobs: readonly PolicyJob[], name: string): PolicyJob | string {
  const job = jobs.find((candidate) => candidate.name === name);
  if (!job) return `no job "${name}" in the policy in force`;
  if (job.kind === 'window')
    return `"${name}" is a window: it reconciles on its own schedule, there is no run of it to start`;
  return job;
}

/** What the check refused, each problem at its place in the policy in force. */
function refusal(problems: readonly string[]): string {
  if (problems.length === 0)
    return "Not queued: the policy in force cannot be read with this process's variables";
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN);
  const more = problems.length - shown.length;
  return `Not queued: ${shown.join('\n')}${more > 0 ? `\n(and ${more} more)` : ''}`;
}

/** A run queued (and the job, which may have been suspended), or why nothing was. */
export type RunNowOutcome = { runId: string; job: PolicyJob } | { problem: string };

/**
 * Queues a run of `name` in the policy in force, with the form's parameters, as `nightshift run`
 * queues one from a file: the text read with them as this process reads the policy's `${VAR}`s,
 * the job's action checking them, and the run recorded in the audit trail as `origin`'s. Nothing is
 * queued when any of that fails: the outcome says why, a problem of the text at its line.
 */
export async function queueFromConsole(
  runNow: ConsoleRunNow,
  current: CurrentPolicy | undefined,
  name: string,
  form: RunNowForm,
  origin: Origin,
): Promise<RunNowOutcome> {
  const parameters = parametersFromForm(form.with);
  if (typeof parameters === 'string') return { problem: `Not queued: ${parameters}` };
  const inForce = inForceText(current);
  if (typeof inForce === 'string') return { problem: `Not queued: ${inForce}` };
  const check = runNow.check(inForce.text, inForce.sha, name, parameters);
  const errors = check.problems.filter((problem) => !isWarning(problem)).map(formatProblem);
  if (!check.policy || errors.length > 0) return { problem: refusal(errors) };
  const job = runnableJob(check.policy.jobs, name);
  if (typeof job === 'string') return { problem: `Not queued: ${job}` };
  const runId = await queueManualRun(
    runNow,
    {
      policyText: inForce.text,
      job,
      dryRun: form.dryRun || job.dryRun,
      parameters,
      reason: form.reason || undefined,
    },
    origin,
  );
  return { runId, job };
}

import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import { type ManualRun, queueManualRun } from '../../control/index.js';
import type { RunSummary } from '../../engine/index.js';
import { PARAMETER_NAME, type Policy, type PolicyJob, type RunParameters } from '../../policy/index.js';
import { enqueueRuns, manualRunId } from '../../queue/index.js';
import { isRedisUnreachable, type Suspension } from '../../store/index.js';
import { cliOrigin } from '../actor.js';
import { painterFor } from '../color.js';
import { EXIT, RunFailedError, reportingUsageErrors, UsageError } from '../exit.js';
import { inlineRunner } from '../inline-run.js';
import { unknownName } from '../policy-in-force.js';
import { describeSuspension, loadPolicy, policyCommandDeps } from '../policy-io.js';
import { jobProgress, ProgressDisplay, progressMode } from '../progress.js';
import {
  cliLogger,
  type RedisRuntime,
  redisRuntime,
  redisSuspensions,
  requiredPolicyKeyring,
} from '../runtime.js';
import { formatSummary } from '../summary-view.js';

interface RunFlags {
  inline?: boolean;
  dryRun?: boolean;
  json?: boolean;
  quiet?: boolean;
  details?: boolean;
  with: string[];
  by?: string;
  reason?: string;
}

/** Who asked for a run and why, for the audit trail. */
interface RunRequester {
  parameters: RunParameters;
  by?: string | undefined;
  reason?: string | undefined;
}

/** Each `--with` is kept in order; `runParameters` reads them. */
function collect(value: string, previous: readonly string[]): string[] {
  return [...previous, value];
}

/**
 * The `--with key=value` options as the run's parameters, each value as typed (a `${VAR}` stays a
 * reference). Only their form is checked here: the job's action checks the rest as the policy loads.
 */
export function runParameters(given: readonly string[]): RunParameters {
  const parameters: RunParameters = {};
  for (const option of given) {
    const split = option.indexOf('=');
    if (split === -1)
      throw new UsageError(`--with ${option}: expected key=value, e.g. --with backupId=bk-1234`);
    const key = option.slice(0, split);
    if (!PARAMETER_NAME.test(key))
      throw new UsageError(
        `--with ${option}: "${key}" is not a parameter's name (a key of the job's "with:": letters, digits, "_" and "-"; a map is given whole, as in --with 'expect={ vertices: 5 }')`,
      );
    if (Object.hasOwn(parameters, key)) throw new UsageError(`--with ${key}: given twice`);
    parameters[key] = option.slice(split + 1);
  }
  return parameters;
}

export function findJob(policy: Policy, name: string): PolicyJob {
  const job = policy.jobs.find((candidate) => candidate.name === name);
  if (job) return job;
  const names = new Set(policy.jobs.map((candidate) => candidate.name));
  throw unknownName(name, { known: true, names, source: policy.file });
}

/**
 * A suspension stops a job's schedule, not an operator: the run goes ahead, as the worker lets
 * manual runs through, but whoever started it is told who suspended the job, when and why.
 */
function noteSuspended(job: string, suspension: Suspension): void {
  process.stderr.write(
    `note: job "${job}" is ${describeSuspension(suspension)}. A suspension stops its schedule, not a manual run: this run goes ahead ("nightshift unsuspend ${job}" restarts the schedule)\n`,
  );
}

/** The job's suspension for a run in this process, which needs no Redis: none without REDIS_URL, a warning if Redis cannot be read. */
async function inlineSuspension(settings: Settings, job: string): Promise<Suspension | undefined> {
  try {
    return (await redisSuspensions(settings))?.get(job);
  } catch (error) {
    process.stderr.write(
      `warning: could not read suspensions from Redis (${(error as Error).message}); running "${job}" without knowing whether it is suspended\n`,
    );
    return undefined;
  }
}

async function runInline(
  settings: Settings,
  policy: Policy,
  job: PolicyJob,
  dryRun: boolean,
  progress: ProgressDisplay,
  parameters: RunParameters,
): Promise<RunSummary> {
  const runner = inlineRunner(settings, [job], { keep: true });
  try {
    const suspension = await inlineSuspension(settings, job.name);
    if (suspension) noteSuspended(job.name, suspension);
    const onProgress = (done: number, total: number) => progress.update(done, total);
    return await runner.run(policy, job, dryRun, onProgress, parameters);
  } finally {
    await runner.close();
  }
}

/**
 * Enqueues the run and follows it until its summary is recorded in the history, showing the
 * progress the worker reports on the run's BullMQ job meanwhile. Enqueueing needs Redis to answer
 * within a few tries; once the run is queued, Redis not answering (a Sentinel failover, a restart)
 * is waited out as the worker waits it out, for up to the job's `timeout`: no run outlasts that,
 * so an outage longer than it leaves nothing to wait for.
 */
async function runQueued(
  settings: Settings,
  file: string,
  job: PolicyJob,
  dryRun: boolean,
  progress: ProgressDisplay,
  requester: RunRequester,
): Promise<RunSummary> {
  const keyring = requiredPolicyKeyring(
    settings,
    "a queued run's policy is signed with the key the workers check (or run it in this process with --inline)",
  );
  const log = cliLogger(settings, 'stderr');
  const runtime = redisRuntime(settings, log, 'run', { oneShot: true, keyring });
  try {
    const suspension = await runtime.suspensions.get(job.name);
    if (suspension) noteSuspended(job.name, suspension);
    const runId = await enqueueRun(runtime, settings, { file, job, dryRun, requester });
    log.info({ runId }, 'run enqueued; waiting for a worker');
    const enqueuedAt = Date.now();
    let warned = false;
    let failedSince: number | undefined;
    let unansweredSince: number | undefined;
    for (;;) {
      let summary: RunSummary | undefined;
      let queued: Awaited<ReturnType<typeof runtime.queue.getJob>>;
      let state: string | undefined;
      try {
        summary = await runtime.history.get(runId);
        if (summary) return summary;
        queued = await runtime.queue.getJob(runId);
        state = await queued?.getState();
      } catch (error) {
        if (!isRedisUnreachable(error)) throw error;
        if (unansweredSince === undefined) {
          unansweredSince = Date.now();
          log.warn(
            { runId, waitingUpToMs: job.timeout },
            'Redis did not answer; still waiting for the run, which goes on in its worker (a failover or a restart?)',
          );
        }
        // main() says which Redis did not answer
        if (Date.now() - unansweredSince > job.timeout) throw error;
        await sleep(250);
        continue;
      }
      unansweredSince = undefined;
      if (!warned && state === 'waiting' && Date.now() - enqueuedAt > NO_WORKER_WARNING_MS) {
        warned = true;
        log.warn(
          { runId, waitedMs: Date.now() - enqueuedAt },
          'no worker has taken the run yet: is `nightshift worker` (or `start`) running on this Redis and prefix?',
        );
      }
      // the worker records a summary for a run it fails; should it die before, BullMQ's reason is all there is
      if (state === 'failed') {
        failedSince ??= Date.now();
        if (Date.now() - failedSince > FAILED_SUMMARY_GRACE_MS)
          throw new RunFailedError(runId, queued?.failedReason ?? 'failed in the queue without a summary');
      }
      if (progress.mode !== 'off') {
        const reported = jobProgress(queued?.progress);
        if (reported) progress.update(reported.done, reported.total);
      }
      await sleep(250);
    }
  } finally {
    await runtime.close();
  }
}

/** Queues the run through src/control, which stores the policy, records who asked and signs the parameters. */
async function enqueueRun(
  runtime: RedisRuntime,
  settings: Settings,
  {
    file,
    job,
    dryRun,
    requester,
  }: { file: string; job: PolicyJob; dryRun: boolean; requester: RunRequester },
): Promise<string> {
  const ports = {
    policies: runtime.policies,
    runId: manualRunId,
    enqueue: (run: ManualRun) => enqueueRuns(runtime.queue, [run]),
    audit: runtime.audit,
  };
  const request = {
    policyText: await readFile(file, 'utf8'),
    job,
    dryRun,
    parameters: requester.parameters,
    reason: requester.reason,
  };
  return queueManualRun(ports, request, cliOrigin(requester.by, settings));
}

/** How long a queued run may wait for a worker before `run` says none seems to be there. */
const NO_WORKER_WARNING_MS = 10_000;
/** How long `run` waits for the summary of a run BullMQ already holds as failed. */
const FAILED_SUMMARY_GRACE_MS = 3_000;

/**
 * 0 when every target succeeded (or was rightly skipped), 3 when it did but the run reported
 * findings, 1 otherwise.
 */
export function runExitCode(summary: RunSummary): number {
  if (summary.outcome === 'awaiting-approval') return EXIT.ok;
  if (summary.outcome !== 'succeeded' && summary.outcome !== 'skipped') return EXIT.failed;
  return summary.findings.length > 0 ? EXIT.findings : EXIT.ok;
}

/** What `run --help` says after the options. */
const RUN_HELP = [
  '',
  'Without --inline the run goes through the queue in Redis (REDIS_URL) and a worker must be running; the policy',
  'is signed with NIGHTSHIFT_POLICY_KEY, the key the workers check (a `nightshift start` without the key runs',
  'only its own policies).',
  "The table lists failed targets first; a target's structured details (an update's before and after) are",
  'named, not shown: --details shows them, --json gives everything.',
  'Progress (targets done / total) goes to stderr: a bar redrawn in place on a terminal, a line',
  'every 10% or few seconds otherwise (and when CI is set); none with --quiet or NIGHTSHIFT_LOG_FORMAT=json.',
  "--with key=value gives this run a parameter over the job's `with:` (repeat it for more). The value is read",
  'as YAML reads a value in the policy (10m, true, 5, [a, b], { min: 5 }), kept as text where the action wants',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the help shows the policy's own ${VAR} syntax
  "text; a ${VAR} in it resolves where the policy's own do (a worker reads it from its own environment) and",
  "is recorded as written. The action's schema checks the job it makes as if the policy said so: a key it",
  'does not take or a value it refuses exits 2, at the job in the file. The summary, `history --json`, the',
  "console's run page and the audit trail (queued runs, with --by and --reason) record the parameters.",
  'A job suspended with "nightshift suspend" still runs when started here: its schedule is what stops;',
  'a note on stderr says since when, by whom and why.',
  'Exit codes: 0 every target succeeded or was skipped, 1 the run failed or partly failed, 2 bad usage or an',
  'invalid policy (with --json a JSON object on stdout: { "error", "message", "problems"?, "suggestion"? }),',
  '3 the run succeeded and reported findings (audits).',
  'Once its run is queued, `run` waits out Redis not answering (a Sentinel failover, a restart) for up to the',
  "job's timeout, saying so once on stderr; before that, it gives up after a few tries (exit 1).",
  '',
  'Examples:',
  '  nightshift run config/policy.yaml nightly-pause --inline --dry-run',
  '  nightshift run config/policy.yaml nightly-pause --inline --json > summary.json',
  '  REDIS_URL=redis://127.0.0.1:6379 nightshift run config/policy.yaml morning-resume --quiet',
  '  nightshift run config/examples/runbooks.yaml weekly-restore-drill --with backupId=bk-89511a60 \\',
  '    --reason "drill of the backup before the upgrade"',
  "  nightshift run config/examples/runbooks.yaml weekly-restore-drill --inline --dry-run --with 'expect={ vertices: 5 }'",
].join('\n');

export function registerRunCommand(program: Command, settings: Settings): void {
  program
    .command('run <policy> <job>')
    .description('run one job of the policy now and wait for its summary')
    .option('--inline', 'run in this process, without Redis (same action code)')
    .option('--dry-run', 'plan only: read-only calls, change nothing')
    .option(
      '--json',
      'print the run summary as JSON (stdout holds nothing else); bad usage as { "error", "message", … }',
    )
    .option('-q, --quiet', 'no progress display on stderr')
    .option('--details', "show targets' structured details too (an update's before and after, as JSON)")
    .option(
      '--with <key=value>',
      "a parameter for this run, over the job's `with:` (repeatable); checked by the action's schema",
      collect,
      [],
    )
    .option('--by <name>', 'who asks for the run, for the audit trail (default: user@host)')
    .option('--reason <text>', 'why, for the audit trail')
    .addHelpText('after', RUN_HELP)
    .action(
      reportingUsageErrors(async (file: string, name: string, flags: RunFlags) => {
        const parameters = runParameters(flags.with);
        // this job's variables (and the shared sections'): the others are checked as validate does
        const policy = await loadPolicy(file, policyCommandDeps(settings), {
          only: name,
          parameters: { job: name, values: parameters },
        });
        const job = findJob(policy, name);
        const dryRun = flags.dryRun === true || job.dryRun;
        if (flags.inline && job.approval && !dryRun)
          throw new UsageError(
            `job "${job.name}" needs approval before it acts: run it without --inline (it waits, its plan attached, for \`nightshift approve\`), or with --dry-run`,
          );
        const progress = new ProgressDisplay({
          mode: progressMode(process.stderr, settings, { quiet: flags.quiet }),
          stream: process.stderr,
        });
        let summary: RunSummary;
        try {
          summary = flags.inline
            ? await runInline(settings, policy, job, dryRun, progress, parameters)
            : await runQueued(settings, file, job, dryRun, progress, {
                parameters,
                by: flags.by,
                reason: flags.reason,
              });
          // polling can miss the last report: the summary accounts for every target
          progress.update(summary.counts.total, summary.counts.total);
        } finally {
          progress.finish();
        }
        process.stdout.write(
          flags.json
            ? `${JSON.stringify(summary, null, 2)}\n`
            : formatSummary(summary, {
                painter: painterFor(process.stdout, settings.terminal),
                details: flags.details === true,
              }),
        );
        process.exitCode = runExitCode(summary);
      }),
    );
}

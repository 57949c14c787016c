import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { didYouMean, type Policy, type PolicyJob } from '../../policy/index.js';
import { enqueueRuns, manualRunId } from '../../queue/run-queue.js';
import type { RunSummary } from '../../runs/index.js';
import { EXIT, UsageError } from '../exit.js';
import { inlineRunner } from '../inline-run.js';
import { loadOrReport, policyCommandDeps } from '../policy-io.js';
import { cliLogger, redisRuntime } from '../runtime.js';
import { formatSummary } from '../summary-view.js';

interface RunFlags {
  inline?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

export function findJob(policy: Policy, name: string): PolicyJob {
  const job = policy.jobs.find((candidate) => candidate.name === name);
  if (job) return job;
  const names = policy.jobs.map((candidate) => candidate.name);
  const suggestion = didYouMean(name, names);
  throw new UsageError(
    `no job "${name}" in ${policy.file}${suggestion ? `; did you mean "${suggestion}"?` : ''}`,
  );
}

async function runInline(policy: Policy, job: PolicyJob, dryRun: boolean): Promise<RunSummary> {
  const runner = inlineRunner();
  try {
    return await runner.run(policy, job, dryRun);
  } finally {
    await runner.close();
  }
}

/** Enqueues the run and follows it through the history until its summary is recorded. */
async function runQueued(file: string, job: PolicyJob, dryRun: boolean): Promise<RunSummary> {
  const log = cliLogger('stderr');
  const runtime = redisRuntime(log, 'run', { oneShot: true });
  try {
    const text = await readFile(file, 'utf8');
    const policySha = await runtime.policies.put(text);
    const runId = manualRunId(job.name);
    await enqueueRuns(runtime.queue, [{ runId, job: job.name, policySha, trigger: 'manual', dryRun }]);
    log.info({ runId }, 'run enqueued; waiting for a worker');
    for (;;) {
      const summary = await runtime.history.get(runId);
      if (summary) return summary;
      await sleep(250);
    }
  } finally {
    await runtime.close();
  }
}

/**
 * 0 when every target succeeded (or was rightly skipped), 3 when it did but the run reported
 * findings, 1 otherwise.
 */
export function runExitCode(summary: RunSummary): number {
  if (summary.outcome !== 'succeeded' && summary.outcome !== 'skipped') return EXIT.failed;
  return summary.findings.length > 0 ? EXIT.findings : EXIT.ok;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run <policy> <job>')
    .description('run one job of the policy now and wait for its summary')
    .option('--inline', 'run in this process, without Redis (same action code)')
    .option('--dry-run', 'plan only: read-only calls, change nothing')
    .option('--json', 'print the run summary as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 every target succeeded or was skipped, 1 the run failed or partly failed, 2 bad usage,\n3 the run succeeded and reported findings (audits).\n\nExamples:\n  nightshift run config/policy.yaml nightly-pause --inline --dry-run\n  REDIS_URL=redis://127.0.0.1:6379 nightshift run config/policy.yaml morning-resume --json',
    )
    .action(async (file: string, name: string, flags: RunFlags) => {
      const policy = await loadOrReport(file, policyCommandDeps());
      if (!policy) return;
      const job = findJob(policy, name);
      const dryRun = flags.dryRun === true || job.dryRun;
      const summary = flags.inline
        ? await runInline(policy, job, dryRun)
        : await runQueued(file, job, dryRun);
      process.stdout.write(flags.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
      process.exitCode = runExitCode(summary);
    });
}

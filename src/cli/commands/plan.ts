import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import type { RunSummary } from '../../engine/index.js';
import { painterFor } from '../color.js';
import { EXIT } from '../exit.js';
import { inlineRunner } from '../inline-run.js';
import { loadOrReport, policyCommandDeps } from '../policy-io.js';
import { formatPlans } from '../summary-view.js';
import { findJob, runExitCode } from './run.js';

interface PlanFlags {
  job?: string;
  json?: boolean;
  details?: boolean;
}

/** The worst of the plans' exit codes: a failed plan outweighs findings, findings outweigh success. */
function planExitCode(summaries: readonly RunSummary[]): number {
  const codes = summaries.map(runExitCode);
  if (codes.includes(EXIT.failed)) return EXIT.failed;
  return codes.includes(EXIT.findings) ? EXIT.findings : EXIT.ok;
}

export function registerPlanCommand(program: Command, settings: Settings): void {
  program
    .command('plan <policy>')
    .description('show what every job (or one) would do right now against the API, changing nothing')
    .option('--job <name>', 'only this job')
    .option('--json', 'print the plans as a JSON array of run summaries (every target listed)')
    .option('--details', "show targets' structured details too (an update's before and after)")
    .addHelpText(
      'after',
      [
        '',
        'Only read-only API calls are made (list workgroups, allowed IPs, current IP, cloud providers, org users).',
        'Prints one row per job (targets, what would be done, skipped, failed, findings), then details of the',
        'jobs that would change something, failed or found something, listing only the targets concerned.',
        'Exit codes: 0 every plan made, 1 a plan could not be made, 2 bad usage, 3 plans made with findings.',
        '',
        'Examples:',
        '  nightshift plan config/policy.yaml',
        '  nightshift plan config/policy.yaml --job nightly-pause --json',
      ].join('\n'),
    )
    .action(async (file: string, flags: PlanFlags) => {
      const policy = await loadOrReport(file, policyCommandDeps(settings), { only: flags.job });
      if (!policy) return;
      const jobs = flags.job === undefined ? policy.jobs : [findJob(policy, flags.job)];
      const runner = inlineRunner(settings, jobs);
      const summaries: RunSummary[] = [];
      try {
        for (const job of jobs) summaries.push(await runner.run(policy, job, true));
      } finally {
        await runner.close();
      }
      process.stdout.write(
        flags.json
          ? `${JSON.stringify(summaries, null, 2)}\n`
          : formatPlans(summaries, painterFor(process.stdout, settings.terminal), flags.details === true),
      );
      process.exitCode = planExitCode(summaries);
    });
}

import type { Command } from 'commander';
import { formatLocal, nextFiring, type Policy } from '../../policy/index.js';
import { describeTarget, loadOrReport, type PolicyCommandDeps, policyCommandDeps } from '../policy-io.js';
import { alignColumns } from '../table.js';

function summaryRows(policy: Policy, now: Date): string[][] {
  const rows = [['JOB', 'ACTION', 'TARGET', 'NEXT FIRING', 'TIME ZONE', 'NOTES']];
  for (const job of policy.jobs) {
    const next = job.suspend ? undefined : nextFiring(job.schedule, now, job.skipDates);
    const when = job.suspend ? 'suspended' : next ? formatLocal(next.at.getTime(), job.timezone) : 'never';
    const notes = [job.dryRun ? 'dry run' : '', job.description ?? ''].filter(Boolean).join('; ');
    rows.push([job.name, job.action, describeTarget(job), when, job.timezone, notes]);
  }
  return rows;
}

export function registerValidateCommand(program: Command, overrides: Partial<PolicyCommandDeps> = {}): void {
  program
    .command('validate')
    .description('check policy files: one line per job, or every problem as file:line:col: message (exit 2)')
    .argument('<files...>', 'policy files (YAML)')
    .action(async (files: string[]) => {
      const deps = policyCommandDeps(overrides);
      for (const file of files) {
        const policy = await loadOrReport(file, deps);
        if (!policy) continue;
        const count = policy.jobs.length === 1 ? '1 job' : `${policy.jobs.length} jobs`;
        deps.stdout(`${file}: valid, ${count}\n${alignColumns(summaryRows(policy, deps.now()))}\n`);
      }
    });
}

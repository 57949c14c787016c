import type { Command } from 'commander';
import {
  formatLocal,
  loadPolicyFile,
  nextFiring,
  nextWindowEdges,
  type Policy,
  PolicyError,
  type PolicyProblem,
} from '../../policy/index.js';
import { EXIT } from '../exit.js';
import { describeTarget, loadOrReport, type PolicyCommandDeps, policyCommandDeps } from '../policy-io.js';
import { alignColumns } from '../table.js';

function summaryRows(policy: Policy, now: Date): string[][] {
  const rows = [['JOB', 'ACTION', 'TARGET', 'NEXT FIRING', 'TIME ZONE', 'NOTES']];
  for (const job of policy.jobs) {
    // a window's next uptime edge: its interval ticks in between change nothing when nothing drifts
    const next = job.suspend
      ? undefined
      : job.window
        ? nextWindowEdges(job.window, now, 1)[0]
        : nextFiring(job.schedule, now, job.skipDates);
    const when = job.suspend ? 'suspended' : next ? formatLocal(next.at.getTime(), job.timezone) : 'never';
    const notes = [job.dryRun ? 'dry run' : '', job.description ?? ''].filter(Boolean).join('; ');
    rows.push([job.name, job.action, describeTarget(job), when, job.timezone, notes]);
  }
  return rows;
}

/** Every problem in `files`, in file order, as `validate --json` prints them. */
async function problemsIn(files: readonly string[], deps: PolicyCommandDeps): Promise<PolicyProblem[]> {
  const problems: PolicyProblem[] = [];
  for (const file of files) {
    try {
      await loadPolicyFile(file, { registry: deps.registry, env: deps.env });
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      problems.push(...error.problems.map(({ file, line, col, message }) => ({ file, line, col, message })));
    }
  }
  return problems;
}

export function registerValidateCommand(program: Command, overrides: Partial<PolicyCommandDeps> = {}): void {
  program
    .command('validate')
    .description('check policy files: one line per job, or every problem as file:line:col: message (exit 2)')
    .argument('<files...>', 'policy files (YAML)')
    .option('--json', 'print every problem as [{ "file", "line", "col", "message" }] ([] when all are valid)')
    .addHelpText(
      'after',
      [
        '',
        'Exit codes: 0 every file is valid, 2 a file has problems (all of them are reported, in every file).',
        '',
        'Examples:',
        '  nightshift validate config/examples/cost-saving.yaml',
        '  nightshift validate config/examples/*.yaml',
        '  nightshift validate config/examples/cost-saving.yaml --json | jq -r \'.[] | "\\(.file):\\(.line): \\(.message)"\'',
      ].join('\n'),
    )
    .action(async (files: string[], flags: { json?: boolean }) => {
      const deps = policyCommandDeps(overrides);
      if (flags.json) {
        const problems = await problemsIn(files, deps);
        deps.stdout(`${JSON.stringify(problems, null, 2)}\n`);
        if (problems.length > 0) deps.setExitCode(EXIT.usage);
        return;
      }
      for (const file of files) {
        const policy = await loadOrReport(file, deps);
        if (!policy) continue;
        const count = policy.jobs.length === 1 ? '1 job' : `${policy.jobs.length} jobs`;
        deps.stdout(`${file}: valid, ${count}\n${alignColumns(summaryRows(policy, deps.now()))}\n`);
      }
    });
}

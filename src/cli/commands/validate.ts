import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import {
  checkPolicyFile,
  formatLocal,
  formatProblem,
  hideSecrets,
  isWarning,
  nextFiring,
  nextWindowEdges,
  type Policy,
  type PolicyCheck,
  type PolicyJob,
} from '../../policy/index.js';
import { EXIT } from '../exit.js';
import { describeTarget, type PolicyCommandDeps, policyCommandDeps, withSinkCommands } from '../policy-io.js';
import { alignColumns } from '../table.js';

/**
 * When the job next fires in its zone (a window: its next uptime edge, since its interval ticks in
 * between change nothing when nothing drifts); `unknown` when its schedule or zone is an unset
 * variable's.
 */
function nextWhen(job: PolicyJob, now: Date): string {
  if (job.suspend) return 'suspended';
  try {
    const next = job.window
      ? nextWindowEdges(job.window, now, 1)[0]
      : nextFiring(job.schedule, now, job.skipDates);
    return next ? formatLocal(next.at.getTime(), job.timezone) : 'never';
  } catch {
    return 'unknown';
  }
}

function summaryRows(policy: Policy, now: Date): string[][] {
  // a target, a note or a zone may come from a secret variable: shown as ${NAME}, as everywhere
  const hide = hideSecrets(policy.secrets);
  const rows = [['JOB', 'ACTION', 'TARGET', 'NEXT FIRING', 'TIME ZONE', 'NOTES']];
  for (const job of policy.jobs) {
    const uptime = job.window ? `uptime ${job.window.uptimeText}` : '';
    const notes = [uptime, job.dryRun ? 'dry run' : '', job.description ?? ''].filter(Boolean).join('; ');
    // a window shows as such: its engine action is no name a job could use
    const action = job.window ? 'window' : job.action;
    rows.push(hide([job.name, action, describeTarget(job), nextWhen(job, now), job.timezone, notes]));
  }
  return rows;
}

function plural(count: number, one: string): string {
  return `${count} ${one}${count === 1 ? '' : 's'}`;
}

/** The line above a valid file's table, or the whole answer when its jobs cannot be resolved. */
function verdict(file: string, { policy, problems }: PolicyCheck): string {
  const warnings = problems.length > 0 ? `, ${plural(problems.length, 'warning')}` : '';
  if (!policy) return `${file}: valid as far as it can be checked without its unset variables${warnings}\n`;
  const windows = policy.jobs.filter((job) => job.window).length;
  const jobs = policy.jobs.length - windows;
  const counted = windows > 0 ? `${plural(jobs, 'job')}, ${plural(windows, 'window')}` : plural(jobs, 'job');
  return `${file}: valid, ${counted}${warnings}\n`;
}

export function registerValidateCommand(
  program: Command,
  settings: Settings,
  overrides: Partial<PolicyCommandDeps> = {},
): void {
  program
    .command('validate')
    .description(
      'check policy files: one line per job, or every problem as file:line:col: message (exit 2 on errors)',
    )
    .argument('<files...>', 'policy files (YAML)')
    .option(
      '--json',
      'print every problem as [{ "file", "line", "col", "message", "severity" }] ([] when there are none)',
    )
    .option(
      '--strict-env',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
      'an unset ${VAR} is an error (by default a warning: CI can check without secrets)',
    )
    .addHelpText(
      'after',
      [
        '',
        'Exit codes: 0 no file has errors (warnings are printed), 2 a file has errors (all of them are reported, in every file).',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
        'An unset ${VAR} is a warning here, and the string holding it is not checked further; start, run and plan',
        'refuse it. --strict-env refuses it here too.',
        '',
        'Examples:',
        '  nightshift validate config/examples/cost-saving.yaml',
        '  nightshift validate config/examples/*.yaml',
        '  nightshift validate config/policy.yaml --strict-env   # with the secrets set, as start will see them',
        '  nightshift validate config/examples/cost-saving.yaml --json | jq -r \'.[] | "\\(.file):\\(.line): \\(.severity): \\(.message)"\'',
      ].join('\n'),
    )
    .action(async (files: string[], flags: { json?: boolean; strictEnv?: boolean }) => {
      const deps = policyCommandDeps(settings, overrides);
      const options = {
        registry: deps.registry,
        env: deps.env,
        allowEnv: deps.allowEnv,
        now: deps.now(),
        unsetVariables: flags.strictEnv ? ('error' as const) : ('warning' as const),
      };
      const checks: { file: string; check: PolicyCheck }[] = [];
      for (const file of files)
        checks.push({
          file,
          check: withSinkCommands(await checkPolicyFile(file, options), deps.sinkCommands),
        });
      const problems = checks.flatMap(({ check }) => check.problems);
      if (problems.some((problem) => !isWarning(problem))) deps.setExitCode(EXIT.usage);
      if (flags.json) {
        const entries = problems.map(({ file, line, col, message, severity }) => ({
          file,
          line,
          col,
          message,
          severity: severity ?? 'error',
        }));
        deps.stdout(`${JSON.stringify(entries, null, 2)}\n`);
        return;
      }
      for (const { file, check } of checks) {
        if (check.problems.length > 0) deps.stderr(`${check.problems.map(formatProblem).join('\n')}\n`);
        if (check.problems.some((problem) => !isWarning(problem))) continue;
        const table = check.policy ? `${alignColumns(summaryRows(check.policy, deps.now()))}\n` : '';
        deps.stdout(`${verdict(file, check)}${table}`);
      }
    });
}

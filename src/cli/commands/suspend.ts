import type { Command } from 'commander';
import { cliLogger, redisRuntime } from '../runtime.js';

/** What `suspend --json` and `unsuspend --json` print: the job's state now, and whether this call changed it. */
export interface SuspendResult {
  readonly job: string;
  readonly suspended: boolean;
  readonly changed: boolean;
}

function report(result: SuspendResult, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const { job, suspended, changed } = result;
  if (suspended) process.stdout.write(changed ? `suspended ${job}\n` : `${job} was already suspended\n`);
  else process.stdout.write(changed ? `unsuspended ${job}\n` : `${job} was not suspended\n`);
}

export function registerSuspendCommands(program: Command): void {
  program
    .command('suspend <job>')
    .description(
      "stop a job's schedule without editing the policy (kept in Redis; ticks are recorded as skipped)",
    )
    .option('--reason <text>', 'why, shown in history and next')
    .option('--by <name>', 'who suspended it (default: $USER)')
    .option('--json', 'print { "job", "suspended", "changed" }')
    .addHelpText(
      'after',
      [
        '',
        'Exit code 0 whether or not the job was already suspended ("changed" tells them apart).',
        '',
        'Examples:',
        '  nightshift suspend nightly-pause --reason "release freeze" --by alice',
        '  REDIS_URL=redis://127.0.0.1:6379 nightshift suspend nightly-pause --json',
      ].join('\n'),
    )
    .action(async (job: string, flags: { reason?: string; by?: string; json?: boolean }) => {
      const runtime = redisRuntime(cliLogger('stderr'), 'cli', { oneShot: true });
      try {
        const changed = await runtime.suspensions.suspend(job, {
          reason: flags.reason,
          by: flags.by ?? process.env.USER,
        });
        report({ job, suspended: true, changed }, flags.json);
      } finally {
        await runtime.close();
      }
    });
  program
    .command('unsuspend <job>')
    .description("restart a suspended job's schedule")
    .option('--json', 'print { "job", "suspended", "changed" }')
    .addHelpText(
      'after',
      [
        '',
        'Exit code 0 whether or not the job was suspended ("changed" tells them apart).',
        '',
        'Examples:',
        '  nightshift unsuspend nightly-pause',
        '  nightshift unsuspend nightly-pause --json',
      ].join('\n'),
    )
    .action(async (job: string, flags: { json?: boolean }) => {
      const runtime = redisRuntime(cliLogger('stderr'), 'cli', { oneShot: true });
      try {
        const changed = await runtime.suspensions.unsuspend(job);
        report({ job, suspended: false, changed }, flags.json);
      } finally {
        await runtime.close();
      }
    });
}

import type { Command } from 'commander';
import { cliLogger, redisRuntime } from '../runtime.js';

export function registerSuspendCommands(program: Command): void {
  program
    .command('suspend <job>')
    .description(
      "stop a job's schedule without editing the policy (kept in Redis; ticks are recorded as skipped)",
    )
    .option('--reason <text>', 'why, shown in history and next')
    .option('--by <name>', 'who suspended it (default: $USER)')
    .addHelpText(
      'after',
      '\nExample:\n  nightshift suspend nightly-pause --reason "release freeze" --by alice',
    )
    .action(async (job: string, flags: { reason?: string; by?: string }) => {
      const runtime = redisRuntime(cliLogger('stderr'), 'cli', { oneShot: true });
      try {
        const changed = await runtime.suspensions.suspend(job, {
          reason: flags.reason,
          by: flags.by ?? process.env.USER,
        });
        process.stdout.write(changed ? `suspended ${job}\n` : `${job} was already suspended\n`);
      } finally {
        await runtime.close();
      }
    });
  program
    .command('unsuspend <job>')
    .description("restart a suspended job's schedule")
    .addHelpText('after', '\nExample:\n  nightshift unsuspend nightly-pause')
    .action(async (job: string) => {
      const runtime = redisRuntime(cliLogger('stderr'), 'cli', { oneShot: true });
      try {
        const changed = await runtime.suspensions.unsuspend(job);
        process.stdout.write(changed ? `unsuspended ${job}\n` : `${job} was not suspended\n`);
      } finally {
        await runtime.close();
      }
    });
}

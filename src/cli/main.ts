import { Command, CommanderError } from 'commander';
import { registerDemoCommand } from './commands/demo.js';
import { registerHistoryCommand } from './commands/history.js';
import { registerNextCommand } from './commands/next.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerRunCommand } from './commands/run.js';
import { registerSchedulerCommand } from './commands/scheduler.js';
import { registerSchemaCommand } from './commands/schema.js';
import { registerSimCommand } from './commands/sim.js';
import { registerStartCommand } from './commands/start.js';
import { registerSuspendCommands } from './commands/suspend.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerWorkerCommand } from './commands/worker.js';
import { EXIT, UsageError } from './exit.js';
import type { PolicyCommandDeps } from './policy-io.js';
import { redisSuspensions } from './runtime.js';
import { version } from './version.js';

/** The whole CLI. Tests pass `deps` to fix the clock, the registry and the output of the policy commands. */
export function buildProgram(deps: Partial<PolicyCommandDeps> = {}): Command {
  const program = new Command('nightshift')
    .description('Scheduled automation for the Cloud Workspace Management API')
    .version(version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerValidateCommand(program, deps);
  registerNextCommand(program, { suspensions: redisSuspensions, ...deps });
  registerSchemaCommand(program, deps);
  registerStartCommand(program);
  registerSchedulerCommand(program);
  registerWorkerCommand(program);
  registerRunCommand(program);
  registerPlanCommand(program);
  registerHistoryCommand(program);
  registerSuspendCommands(program);
  registerSimCommand(program);
  registerDemoCommand(program);
  return program;
}

/** Runs the CLI and resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
      if (error.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`nightshift: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}

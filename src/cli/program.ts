import type { Command } from 'commander';
import { processEnvironment, type Settings } from '../config/index.js';
import { emptyProgram, type Registrar } from './command-modules.js';
import { registerAdoptCommand } from './commands/adopt.js';
import { registerApprovalCommands } from './commands/approve.js';
import { registerAuditCommand } from './commands/audit.js';
import { registerCancelCommand } from './commands/cancel.js';
import { registerConsoleTokenCommand } from './commands/console-token.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDriftCommands } from './commands/drift.js';
import { registerHistoryCommand } from './commands/history.js';
import { registerHoldCommands } from './commands/hold.js';
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
import { settingsFrom } from './exit.js';
import type { PolicyCommandDeps } from './policy-io.js';

/** Every command module's registrar, in the order `nightshift --help` lists their commands. */
export const REGISTRARS: readonly Registrar[] = [
  registerValidateCommand,
  registerNextCommand,
  registerSchemaCommand,
  registerStartCommand,
  registerSchedulerCommand,
  registerWorkerCommand,
  registerRunCommand,
  registerPlanCommand,
  registerHistoryCommand,
  registerCancelCommand,
  registerApprovalCommands,
  registerSuspendCommands,
  registerHoldCommands,
  registerDriftCommands,
  registerAdoptCommand,
  registerAuditCommand,
  registerConsoleTokenCommand,
  registerSimCommand,
  registerDemoCommand,
];

/**
 * The whole CLI, every command, on `settings` read once from the environment. Tests pass `deps`
 * to fix the clock, the registry and the output of the policy commands.
 */
export function buildProgram(
  deps: Partial<PolicyCommandDeps> = {},
  settings: Settings = settingsFrom(processEnvironment()),
): Command {
  const program = emptyProgram();
  for (const register of REGISTRARS) register(program, settings, deps);
  return program;
}

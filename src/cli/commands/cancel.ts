import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import {
  type CancelResult,
  type Origin,
  RunAwaitingApprovalError,
  requestCancel,
  UnknownRunError,
} from '../../control/index.js';
import { describeCancellation } from '../../engine/index.js';
import { cliOrigin } from '../actor.js';
import { EXIT, reportingUsageErrors, UsageError } from '../exit.js';
import { policyTextInForce, windowNames } from '../policy-in-force.js';
import { cliLogger, type RedisRuntime, redisRuntime } from '../runtime.js';

/** What `cancel --json` prints. */
export interface CancelReport extends CancelResult {
  /** For a window's reconciliation: the window stays in force. */
  readonly note?: string;
}

interface CancelFlags {
  reason?: string;
  by?: string;
  json?: boolean;
}

function report(result: CancelReport, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const who = result.cancellation ? describeCancellation(result.cancellation) : '';
  if (result.state === 'finished')
    process.stdout.write(`${result.runId} already finished (${result.outcome}): nothing to cancel\n`);
  else if (result.state === 'cancelled') process.stdout.write(`${result.runId} was ${who}\n`);
  else
    process.stdout.write(
      `${result.requested ? 'cancelling' : 'already cancelling'} ${result.runId} (${who}): it starts no new target; targets under way finish their step\n`,
    );
  if (result.note) process.stdout.write(`${result.note}\n`);
}

/** For a window's reconciliation: what cancelling it does not do. */
async function windowNote(runtime: RedisRuntime, job: string): Promise<string | undefined> {
  // the cancel is already asked for: a policy that cannot be read only leaves the note out
  const isWindow = await policyTextInForce(runtime.policies, undefined, runtime.prefix).then(
    (policy) => policy.known && windowNames(policy.text, policy.file).has(job),
    () => false,
  );
  if (!isWindow) return undefined;
  return `note: "${job}" is a window: it stays in force, and its next reconciliation acts again unless you \`nightshift suspend ${job}\``;
}

async function cancel(
  runtime: RedisRuntime,
  runId: string,
  flags: CancelFlags,
  origin: Origin,
): Promise<CancelReport> {
  try {
    const result = await requestCancel(
      {
        history: runtime.history,
        queued: async (id) => (await runtime.queue.getJob(id))?.data,
        cancellations: runtime.cancellations,
        approvals: runtime.approvals,
        audit: runtime.audit,
      },
      runId,
      { reason: flags.reason },
      origin,
    );
    const note = result.job === undefined ? undefined : await windowNote(runtime, result.job);
    return { ...result, ...(note ? { note } : {}) };
  } catch (error) {
    if (error instanceof UnknownRunError)
      throw new UsageError(`${error.message} (see \`nightshift history\`)`);
    if (error instanceof RunAwaitingApprovalError) throw new UsageError(error.message);
    throw error;
  }
}

export function registerCancelCommand(program: Command, settings: Settings): void {
  program
    .command('cancel <runId>')
    .description('cancel a run: it starts no new target, lets those under way finish, and ends cancelled')
    .option('--reason <text>', 'why, recorded in its summary and notifications')
    .option('--by <name>', 'who cancels it (default: $USER@host)')
    .option('--json', 'print { "runId", "state", "requested", "cancellation", "outcome", "note" }')
    .addHelpText(
      'after',
      [
        '',
        'The worker running it learns of the cancel with its next lease renewal (a third of NIGHTSHIFT_LOCK_MS,',
        '10 s by default), or as it takes the run when it is still queued. A split run stops handing out parts:',
        'queued parts are taken off the queue, running ones stop too. What it did so far stays recorded',
        '(checkpoints, ownership); its summary ends "cancelled" with who and why, and the sinks hear of it',
        '(event "cancelled"). Cancelling a window\'s reconciliation leaves the window in force.',
        'Exit code 0 when the run is cancelling or was cancelled, 1 when it had already finished otherwise,',
        '2 for a run id neither queued nor recorded.',
        '',
        'Examples:',
        '  nightshift cancel nightly-upgrade@20261127T020000.000Z --reason "provider incident" --by alice',
        '  nightshift cancel nightly-upgrade@20261127T020000.000Z --json',
      ].join('\n'),
    )
    .action(
      reportingUsageErrors(async (runId: string, flags: CancelFlags) => {
        const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
        try {
          const result = await cancel(runtime, runId, flags, cliOrigin(flags.by, settings));
          report(result, flags.json);
          if (result.state === 'finished') process.exitCode = EXIT.failed;
        } finally {
          await runtime.close();
        }
      }),
    );
}

import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import {
  type ApprovalPorts,
  approveRun,
  type DecisionResult,
  NotAnApproverError,
  rejectRun,
  UnknownApprovalError,
} from '../../control/index.js';
import { describePlan } from '../../engine/index.js';
import { queueApprovedRun } from '../../queue/index.js';
import { systemClock } from '../../time/index.js';
import { cliOrigin } from '../actor.js';
import { EXIT, reportingUsageErrors, UsageError } from '../exit.js';
import { cliLogger, type RedisRuntime, redisRuntime } from '../runtime.js';
import { alignColumns } from '../table.js';

interface DecisionFlags {
  note?: string;
  by?: string;
  json?: boolean;
}

function ports(runtime: RedisRuntime): ApprovalPorts {
  return {
    approvals: runtime.approvals,
    queueApproved: (record) => queueApprovedRun(runtime.queue, record),
    recordEnded: (summary) => runtime.history.record(summary),
    audit: runtime.audit,
    clock: systemClock,
  };
}

function report(result: DecisionResult, json: boolean | undefined): void {
  if (json) {
    const { runId, state, decided, record } = result;
    process.stdout.write(
      `${JSON.stringify({ runId, state, decided, job: record.job, round: record.round, decision: record.decision ?? null, plan: record.plan })}\n`,
    );
    return;
  }
  const { runId, state, decided, record } = result;
  const plan = describePlan(record.plan);
  if (!decided && state === 'expired')
    process.stdout.write(`${runId} expired at ${record.expiresAt} before it was decided: it ends expired\n`);
  else if (!decided)
    process.stdout.write(
      `${runId} was already ${state}${record.decision ? ` by ${record.decision.by}` : ''}: nothing changed\n`,
    );
  else if (state === 'approved')
    process.stdout.write(
      `approved ${runId} (${plan}): queued to act; it acts if its plan then asks for nothing more, else it asks again\n`,
    );
  else process.stdout.write(`rejected ${runId}: it ends rejected, having done nothing\n`);
}

function registerDecision(program: Command, settings: Settings, verb: 'approve' | 'reject'): void {
  const approve = verb === 'approve';
  program
    .command(`${verb} <runId>`)
    .description(
      approve
        ? 'approve a run waiting for approval: it is queued again and acts on the plan approved'
        : 'reject a run waiting for approval: it ends rejected, having done nothing',
    )
    .option('--note <text>', 'why, kept in the run summary and the audit trail')
    .option('--by <name>', `who ${verb}s it (default: user@host)`)
    .option('--json', 'print { "runId", "state", "decided", "job", "round", "decision", "plan" }')
    .addHelpText(
      'after',
      [
        '',
        "Runs of a job with `approval:` wait, their plan (the dry run's targets and changes) attached, until a",
        'person approves or rejects them, or they expire (`approval.expires`, 4h by default). `nightshift approvals`',
        'lists them. An approved run is queued again and acts only if its plan then asks for nothing the approved',
        'plan did not (doing less is fine); else it asks again, naming the difference. Where the job names',
        '`approvers`, only they may decide (--by, else user@host). Each decision is in the audit trail.',
        'Exit codes: 0 decided now, 1 decided before or expired, 2 an unknown run or a person not among the approvers.',
        '',
        'Example:',
        `  nightshift ${verb} restore-drill@20261127T020000.000Z --note "checked the backup id" --by alice`,
      ].join('\n'),
    )
    .action(
      reportingUsageErrors(async (runId: string, flags: DecisionFlags) => {
        const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
        try {
          const decide = approve ? approveRun : rejectRun;
          const result = await decide(
            ports(runtime),
            runId,
            { note: flags.note },
            cliOrigin(flags.by, settings),
          );
          report(result, flags.json);
          if (!result.decided) process.exitCode = EXIT.failed;
        } catch (error) {
          if (error instanceof UnknownApprovalError || error instanceof NotAnApproverError)
            throw new UsageError(
              error instanceof UnknownApprovalError
                ? `${error.message} (see \`nightshift approvals\`)`
                : error.message,
            );
          throw error;
        } finally {
          await runtime.close();
        }
      }),
    );
}

function registerApprovals(program: Command, settings: Settings): void {
  program
    .command('approvals')
    .description('runs waiting for approval: job, plan, who may decide, until when')
    .option('--json', 'print the approval records (plan included) as a JSON array')
    .addHelpText('after', '\nExamples:\n  nightshift approvals\n  nightshift approvals --json')
    .action(
      reportingUsageErrors(async (flags: { json?: boolean }) => {
        const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
        try {
          const records = (await runtime.approvals.all()).filter((record) => record.state === 'pending');
          if (flags.json) process.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
          else if (records.length === 0) process.stdout.write('no run is waiting for approval\n');
          else
            process.stdout.write(
              `${alignColumns([
                ['RUN', 'JOB', 'EXPIRES', 'APPROVERS', 'PLAN'],
                ...records.map((r) => [
                  r.runId,
                  r.job,
                  r.expiresAt,
                  r.approvers.length > 0 ? r.approvers.join(',') : 'anyone',
                  `${r.changedSince ? 'changed since approved; ' : ''}${describePlan(r.plan)}`,
                ]),
              ])}\n`,
            );
        } finally {
          await runtime.close();
        }
      }),
    );
}

export function registerApprovalCommands(program: Command, settings: Settings): void {
  registerApprovals(program, settings);
  registerDecision(program, settings, 'approve');
  registerDecision(program, settings, 'reject');
}

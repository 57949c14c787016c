import type { Command } from 'commander';
import type { Settings } from '../../config/index.js';
import { suspendJob, unsuspendJob } from '../../control/index.js';
import { cliOrigin } from '../actor.js';
import { reportingUsageErrors, UsageError } from '../exit.js';
import { exceptionEnd, parseFor, parseUntil } from '../option-parsers.js';
import {
  checkSuspendable,
  type KnownPolicy,
  type NoPolicy,
  policyInForce,
  unknownName,
} from '../policy-in-force.js';
import { cliLogger, redisRuntime } from '../runtime.js';

/** What `suspend --json` and `unsuspend --json` print: the job's state now, and whether this call changed it. */
export interface SuspendResult {
  readonly job: string;
  readonly suspended: boolean;
  readonly changed: boolean;
  /** When the suspension ends by itself (ISO); absent: until someone unsuspends the job. */
  readonly until?: string;
}

function report(result: SuspendResult, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const { job, suspended, changed, until } = result;
  const end = until ? ` until ${until}` : '';
  if (suspended)
    process.stdout.write(changed ? `suspended ${job}${end}\n` : `${job} was already suspended${end}\n`);
  else process.stdout.write(changed ? `unsuspended ${job}\n` : `${job} was not suspended\n`);
}

interface SuspendFlags {
  reason?: string;
  by?: string;
  for?: number;
  until?: Date;
  policy?: string;
  force?: boolean;
  json?: boolean;
}

interface UnsuspendFlags {
  reason?: string;
  by?: string;
  policy?: string;
  json?: boolean;
}

const POLICY_OPTION = [
  '--policy <file>',
  'check the name against this policy file instead of the one the schedulers run',
] as const;

export function registerSuspendCommands(program: Command, settings: Settings): void {
  registerSuspend(program, settings);
  registerUnsuspend(program, settings);
}

/**
 * Refuses (exit 2) a job that is not in the policy in force, or any job when that policy is not
 * known; with --force, warns instead.
 */
function checkBeforeSuspend(job: string, policy: KnownPolicy | NoPolicy, force: boolean | undefined): void {
  if (!force) {
    if (!policy.known)
      throw new UsageError(
        `cannot check that "${job}" is a job: ${policy.why}; pass --policy FILE to check it against a policy file, or --force to suspend it unchecked`,
        { kind: 'no-policy' },
      );
    checkSuspendable(job, policy, ' (--force suspends it anyway)');
  } else if (!policy.known) {
    process.stderr.write(
      `warning: "${job}" not checked against any policy (${policy.why}); suspended anyway\n`,
    );
  } else if (!policy.names.has(job)) {
    process.stderr.write(
      `warning: no job or window "${job}" in ${policy.source}; suspended anyway (--force)\n`,
    );
  }
}

function registerSuspend(program: Command, settings: Settings): void {
  program
    .command('suspend <job>')
    .description(
      "stop a job's schedule without editing the policy (kept in Redis; ticks are recorded as skipped)",
    )
    .option('--reason <text>', 'why, shown in history, next and the audit trail')
    .option('--by <name>', 'who suspended it (default: user@host)')
    .option('--for <duration>', 'end the suspension by itself after this long, e.g. 2h or 3d', parseFor)
    .option('--until <iso>', 'end it by itself at this instant, e.g. 2026-12-01T08:00:00Z', parseUntil)
    .option(...POLICY_OPTION)
    .option('--force', 'suspend a name no policy has (yet): a job about to be deployed')
    .option('--json', 'print { "job", "suspended", "changed" }; a usage error as { "error", "message", … }')
    .addHelpText(
      'after',
      [
        '',
        'The job must be in the policy the schedulers run (the one a scheduler last loaded, recorded in Redis),',
        'or in the file given with --policy; the variables the policy reads need not be set here. An unknown name',
        'exits 2 naming the closest job, and so does any name when no scheduler has run on this Redis yet;',
        '--force suspends it anyway, for a job about to be deployed.',
        'With --for or --until the suspension ends by itself: ticks from that instant run again (no unsuspend',
        'needed); without either it lasts until `nightshift unsuspend`. Suspending a suspended job again sets its',
        'end anew (none without --for/--until) and keeps when it began. Each change is in the audit trail.',
        'Exit code 0 whether or not the job was already suspended ("changed" tells them apart).',
        '',
        'Examples:',
        '  nightshift suspend nightly-pause --reason "release freeze" --by alice',
        '  nightshift suspend nightly-pause --for 2h --reason "keep staging up for the demo"',
        '  REDIS_URL=redis://127.0.0.1:6379 nightshift suspend nightly-pause --json',
        '  nightshift suspend weekly-drill --policy config/policy.yaml --force   # before deploying it',
      ].join('\n'),
    )
    .action(
      reportingUsageErrors(async (job: string, flags: SuspendFlags) => {
        const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
        try {
          const policy = await policyInForce(runtime.policies, flags.policy, runtime.prefix);
          checkBeforeSuspend(job, policy, flags.force);
          const until = exceptionEnd(flags, new Date(), { required: false })?.toISOString();
          const changed = await suspendJob(
            { suspensions: runtime.suspensions, audit: runtime.audit },
            job,
            { reason: flags.reason, until },
            cliOrigin(flags.by, settings),
          );
          report({ job, suspended: true, changed, ...(until ? { until } : {}) }, flags.json);
        } finally {
          await runtime.close();
        }
      }),
    );
}

function registerUnsuspend(program: Command, settings: Settings): void {
  program
    .command('unsuspend <job>')
    .description("restart a suspended job's schedule")
    .option('--reason <text>', 'why, kept in the audit trail')
    .option('--by <name>', 'who unsuspends it (default: user@host)')
    .option(...POLICY_OPTION)
    .option('--json', 'print { "job", "suspended", "changed" }; a usage error as { "error", "message", … }')
    .addHelpText(
      'after',
      [
        '',
        'A suspended name is always unsuspended, also one the policy no longer has. A name that is not',
        'suspended exits 0 if it is a job of the policy the schedulers run (or of --policy FILE), else 2 with',
        'the closest suspended job or job named.',
        '',
        'Examples:',
        '  nightshift unsuspend nightly-pause',
        '  nightshift unsuspend nightly-pause --json',
      ].join('\n'),
    )
    .action(
      reportingUsageErrors(async (job: string, flags: UnsuspendFlags) => {
        const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
        try {
          const ports = { suspensions: runtime.suspensions, audit: runtime.audit };
          if (await unsuspendJob(ports, job, { reason: flags.reason }, cliOrigin(flags.by, settings))) {
            report({ job, suspended: false, changed: true }, flags.json);
            return;
          }
          const policy = await policyInForce(runtime.policies, flags.policy, runtime.prefix);
          if (!policy.known || !policy.names.has(job)) {
            const suspended = [...(await runtime.suspensions.all()).keys()];
            throw unknownName(job, policy, {
              lead: `"${job}" is not suspended, and `,
              candidates: [...suspended, ...(policy.known ? policy.names : [])],
              hint: ` (suspended: ${suspended.length > 0 ? suspended.join(', ') : 'none'})`,
            });
          }
          report({ job, suspended: false, changed: false }, flags.json);
        } finally {
          await runtime.close();
        }
      }),
    );
}

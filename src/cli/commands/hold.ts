import { type Command, Option } from 'commander';
import type { Settings } from '../../config/index.js';
import { placeHold, releaseHold } from '../../control/index.js';
import { HOLD_STATES, type Hold, type HoldState, holdPatternProblem } from '../../engine/index.js';
import type { Logger } from '../../log/index.js';
import { cliOrigin } from '../actor.js';
import { UsageError } from '../exit.js';
import {
  type HoldContext,
  type HoldReach,
  holdContext,
  holdReach,
  holdWarnings,
  idleList,
  refuseUnmatched,
} from '../hold-report.js';
import { exceptionEnd, parseFor, parseUntil } from '../option-parsers.js';
import { cliLogger, type RedisRuntime, redisRuntime } from '../runtime.js';
import { alignColumns } from '../table.js';

function checkPattern(pattern: string, options: { shapeOnly?: boolean } = {}): string {
  const problem = holdPatternProblem(pattern, options);
  if (problem) throw new UsageError(problem);
  return pattern;
}

function describe(hold: Hold): string {
  return `${hold.pattern} held ${hold.state} until ${hold.until} by ${hold.by}: ${hold.reason}`;
}

/** What `holds --json` adds to a hold when the fleet and the policy are known. */
function reachJson(reach: HoldReach | undefined): { workspaces?: number; nothingActsOn?: string[] } {
  if (!reach?.idle) return {};
  const names = reach.idle.map((ws) => `${ws.workgroupName}/${ws.workspaceName}`);
  return { workspaces: reach.matched.length, nothingActsOn: names };
}

function idleNote(reach: HoldReach, context: HoldContext | undefined): string {
  const idle = reach.idle ?? [];
  return `nothing acts on ${idle.length} of ${reach.matched.length}: ${idleList(idle, context?.coverage)}`;
}

interface HoldFlags {
  state: HoldState;
  for?: number;
  until?: Date;
  reason?: string;
  dryRun?: boolean;
  by?: string;
  json?: boolean;
  force?: boolean;
  policy?: string;
}

export function registerHoldCommands(program: Command, settings: Settings): void {
  registerHold(program, settings);
  registerHolds(program, settings);
  registerRelease(program, settings);
}

/** The hold `hold <pattern>` places, from its flags; refuses a bad pattern, time or reason (exit 2). */
function holdFromFlags(pattern: string, flags: HoldFlags, settings: Settings): Hold {
  checkPattern(pattern);
  const now = new Date();
  const until = exceptionEnd(flags, now, { required: true }) ?? now;
  const reason = flags.reason?.trim();
  if (!reason) throw new UsageError('--reason must say why');
  return {
    pattern,
    state: flags.state,
    until: until.toISOString(),
    reason,
    by: cliOrigin(flags.by, settings).who,
    createdAt: now.toISOString(),
  };
}

/** What `hold --dry-run` prints: the workspaces the pattern matches, and those of them nothing acts on. */
function matchReport(
  pattern: string,
  reach: HoldReach | undefined,
  context: HoldContext,
  json: boolean | undefined,
): string {
  const name = (ws: HoldReach['matched'][number]) => `${ws.workgroupName}/${ws.workspaceName}`;
  if (json)
    return `${JSON.stringify({
      pattern,
      listing: context.listing,
      matches: reach ? reach.matched.map((ws) => ({ workspace: name(ws), status: ws.status ?? null })) : null,
      ...reachJson(reach),
    })}\n`;
  if (!reach) return `cannot tell what "${pattern}" matches: ${context.listing}\n`;
  const rows = reach.matched.map((ws) => [name(ws), ws.status ?? 'status unknown']);
  return `"${pattern}" matches ${reach.matched.length} workspace(s) (${context.listing}); dry run: no hold placed\n${rows.length > 0 ? `${alignColumns([['WORKSPACE', 'STATUS'], ...rows])}\n` : ''}`;
}

/**
 * Judges a hold's pattern against the fresh fleet and the policy (refused, or warned about), then
 * places it; with `--dry-run`, prints what it matches instead.
 */
async function judgeAndPlace(settings: Settings, pattern: string, flags: HoldFlags): Promise<void> {
  const hold = flags.dryRun ? undefined : holdFromFlags(pattern, flags, settings);
  if (flags.dryRun) checkPattern(pattern);
  const log = cliLogger(settings, 'stderr');
  const runtime = redisRuntime(settings, log, 'cli', { oneShot: true });
  try {
    const context = await holdContext(settings, runtime, log, { fresh: true, policyFile: flags.policy });
    const reach = holdReach(pattern, context);
    if (reach && !flags.force) refuseUnmatched(pattern, reach, context);
    for (const warning of holdWarnings(pattern, reach, context))
      process.stderr.write(`warning: ${warning}\n`);
    if (!hold) {
      process.stdout.write(matchReport(pattern, reach, context, flags.json));
      return;
    }
    await placeHold(
      { holds: runtime.state.holds, audit: runtime.audit },
      hold,
      cliOrigin(flags.by, settings),
    );
    process.stdout.write(flags.json ? `${JSON.stringify(hold)}\n` : `${describe(hold)}\n`);
  } finally {
    await runtime.close();
  }
}

function registerHold(program: Command, settings: Settings): void {
  program
    .command('hold <workspace>')
    .description(
      'keep workspaces active or stopped until a time, whatever windows and pause/resume jobs say (kept in Redis)',
    )
    .addOption(
      new Option('--state <state>', 'the state to keep them in').choices(HOLD_STATES).makeOptionMandatory(),
    )
    .option('--for <duration>', 'how long, e.g. 2h or 3d', parseFor)
    .option('--until <iso>', 'until this instant, e.g. 2026-12-01T08:00:00Z', parseUntil)
    .option(
      '--reason <text>',
      'why: shown in holds, plan, drift, the hold log and the audit trail (required)',
    )
    .option('--by <name>', 'who holds it (default: user@host)')
    .option('--json', 'print the hold as JSON')
    .option('--force', 'place it even if it matches no workspace of the fleet (one yet to be created)')
    .option('--policy <file>', 'judge it against this policy instead of the one the schedulers run')
    .option(
      '--dry-run',
      'list the workspaces the pattern matches, and place nothing (--for and --reason not needed)',
    )
    .addHelpText(
      'after',
      [
        '',
        '<workspace> is <workgroup>/<workspace>: names or ids, or globs (dev-*/*), not negated. The hold placed',
        'last wins where two cover one workspace. Windows bring a held workspace to its state at their next',
        'reconciliation (and own its pause if they stop it); pause jobs skip one held active, resume jobs one',
        'held stopped. A hold ends by itself at its time, or with `nightshift release`.',
        'The fleet is listed first (the API, else the listing the last run kept in Redis): a pattern matching no',
        'workspace is refused (exit 2) unless --force, and a warning names the matched workspaces that no window',
        'covers and no pause or resume job targets in the policy in force: the hold changes nothing there.',
        '',
        'Examples:',
        '  nightshift hold dev-alpha/kg --state active --for 2h --reason "customer demo"',
        '  nightshift hold "dev-*/*" --state stopped --until 2026-12-01T08:00:00Z --reason "budget freeze"',
        '  nightshift hold "dev-*/*" --state active --dry-run   # what it would match',
        'Every hold placed or released is in the audit trail (`nightshift audit`).',
      ].join('\n'),
    )
    .action(async (pattern: string, flags: HoldFlags) => {
      await judgeAndPlace(settings, pattern, flags);
    });
}

interface HoldsFlags {
  log?: boolean;
  json?: boolean;
  policy?: string;
}

/** The hold log, newest first: as JSON, or a table. */
async function printHoldLog(runtime: RedisRuntime, json: boolean | undefined): Promise<void> {
  const events = await runtime.state.holds.log();
  if (json) process.stdout.write(`${JSON.stringify(events, null, 2)}\n`);
  else
    process.stdout.write(
      `${alignColumns([
        ['AT', 'EVENT', 'WORKSPACES', 'STATE', 'UNTIL', 'BY', 'REASON'],
        ...events.map((e) => [
          e.at,
          e.event,
          e.hold.pattern,
          e.hold.state,
          e.hold.until,
          e.by ?? e.hold.by,
          e.hold.reason,
        ]),
      ])}\n`,
    );
}

/**
 * The holds in force, each with what it reaches when the fleet and the policy are known; the
 * policy is read only when there is a hold to judge.
 */
async function printActiveHolds(
  settings: Settings,
  runtime: RedisRuntime,
  log: Logger,
  flags: HoldsFlags,
): Promise<void> {
  const holds = await runtime.state.holds.active(new Date());
  const context =
    holds.length > 0
      ? await holdContext(settings, runtime, log, { fresh: false, policyFile: flags.policy })
      : undefined;
  const reaches = holds.map((hold) => (context ? holdReach(hold.pattern, context) : undefined));
  if (flags.json)
    process.stdout.write(
      `${JSON.stringify(
        holds.map((hold, index) => ({ ...hold, ...reachJson(reaches[index]) })),
        null,
        2,
      )}\n`,
    );
  else if (holds.length === 0) process.stdout.write('no holds\n');
  else process.stdout.write(`${holdsTable(holds, reaches, context)}\n`);
}

/** The holds as a table, with a NOTE column only when a hold reaches workspaces nothing acts on. */
function holdsTable(
  holds: readonly Hold[],
  reaches: readonly (HoldReach | undefined)[],
  context: HoldContext | undefined,
): string {
  const notes = reaches.map((reach) => (reach?.idle?.length ? idleNote(reach, context) : ''));
  const withNotes = notes.some((note) => note !== '');
  const head = ['WORKSPACES', 'STATE', 'UNTIL', 'BY', 'SINCE', 'REASON'];
  return alignColumns([
    withNotes ? [...head, 'NOTE'] : head,
    ...holds.map((h, index) => {
      const row = [h.pattern, h.state, h.until, h.by, h.createdAt, h.reason];
      return withNotes ? [...row, notes[index] ?? ''] : row;
    }),
  ]);
}

function registerHolds(program: Command, settings: Settings): void {
  program
    .command('holds')
    .description('list the holds in force: who holds what until when, and why')
    .option('--log', 'the hold log instead: holds placed, released and run out, newest first')
    .option('--json', 'print JSON')
    .option('--policy <file>', 'judge them against this policy instead of the one the schedulers run')
    .addHelpText(
      'after',
      [
        '',
        'NOTE names the workspaces a hold matches that nothing acts on (no window covers them, no pause or resume',
        'job targets them), from the listing the last run kept and the policy in force: the hold changes nothing',
        'there. --json gives them as "nothingActsOn" (and "workspaces", how many it matches) when both are known.',
        '',
        'Examples:\n  nightshift holds\n  nightshift holds --log --json',
      ].join('\n'),
    )
    .action(async (flags: HoldsFlags) => {
      const log = cliLogger(settings, 'stderr');
      const runtime = redisRuntime(settings, log, 'cli', { oneShot: true });
      try {
        if (flags.log) await printHoldLog(runtime, flags.json);
        else await printActiveHolds(settings, runtime, log, flags);
      } finally {
        await runtime.close();
      }
    });
}

function registerRelease(program: Command, settings: Settings): void {
  program
    .command('release <workspace>')
    .description('end a hold now (the pattern exactly as it was held)')
    .option('--by <name>', 'who releases it (default: user@host)')
    .option('--json', 'print { "released": hold | null }')
    .addHelpText('after', '\nExample:\n  nightshift release dev-alpha/kg')
    .action(async (pattern: string, flags: { by?: string; json?: boolean }) => {
      // exactly as it was held, even a pattern hold now refuses (placed by an older version)
      checkPattern(pattern, { shapeOnly: true });
      const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
      let released: Hold | undefined;
      let others: Hold[] = [];
      try {
        released = await releaseHold(
          { holds: runtime.state.holds, audit: runtime.audit },
          pattern,
          cliOrigin(flags.by, settings),
          new Date(),
        );
        if (!released) others = await runtime.state.holds.active(new Date());
      } finally {
        await runtime.close();
      }
      if (flags.json) process.stdout.write(`${JSON.stringify({ released: released ?? null })}\n`);
      else if (released) process.stdout.write(`released ${describe(released)}\n`);
      if (!released) {
        const names = others.map((hold) => hold.pattern);
        throw new UsageError(
          `no hold on "${pattern}"${names.length > 0 ? ` (holds in force: ${names.join(', ')})` : ' (no holds in force)'}`,
        );
      }
    });
}

import { type Command, InvalidArgumentError } from 'commander';
import type { Settings } from '../../config/index.js';
import type { SavingsReport } from '../../engine/index.js';
import { parseDuration } from '../../policy/index.js';
import { type Painter, painterFor } from '../color.js';
import { EXIT, UsageError } from '../exit.js';
import { counts, type DriftRow, driftRows, savingsSince } from '../fleet-report.js';
import { loadOrReport, policyCommandDeps } from '../policy-io.js';
import { cliLogger, commandApiClient, redisRuntime } from '../runtime.js';
import { alignColumns, type Cell, styled } from '../table.js';

function ownerText(row: DriftRow): string {
  return row.owner ? `${row.owner.kind} ${row.owner.name} since ${row.owner.since}` : '-';
}

function driftCell(row: DriftRow): Cell {
  if (row.stranded) return styled('stranded', 'red');
  if (!row.drift) return 'no';
  return styled(row.hold ? 'held' : 'yes', row.hold ? 'yellow' : 'red');
}

/** The drift table: one row per workspace, differing and stranded ones marked. */
export function formatDrift(rows: readonly DriftRow[], painter: Painter): string {
  if (rows.length === 0) return 'no windows in the policy and nothing stranded: nothing to compare\n';
  const table = alignColumns(
    [
      ['WINDOW', 'WORKSPACE', 'DESIRED', 'ACTUAL', 'DRIFT', 'OWNER', 'HOLD', 'WHY'],
      ...rows.map((row) => [
        row.window ?? '-',
        `${row.workgroup}/${row.workspace}`,
        row.desired ?? 'any',
        row.actual ?? 'unknown',
        driftCell(row),
        ownerText(row),
        row.hold ? `${row.hold.state} until ${row.hold.until}` : '-',
        row.why,
      ]),
    ],
    painter,
  );
  const windowed = rows.filter((row) => row.window !== null);
  const drifting = windowed.filter((row) => row.drift && row.hold === null).length;
  const stranded = rows.filter((row) => row.stranded !== null);
  const owners = [...new Set(stranded.map((row) => row.stranded?.owner))].join(' / ');
  const strandedLine =
    stranded.length > 0
      ? `${stranded.length} workspace(s) paused by nightshift are owned by nobody (stranded): nightshift adopt ${owners} hands them back at the next uptime start\n`
      : '';
  const idle = rows.filter((row) => row.window === null && row.hold !== null && row.stranded === null);
  const idleLine =
    idle.length > 0
      ? `${idle.length} held workspace(s) that no window covers and no pause or resume job targets: their holds change nothing (${idle.filter((row) => row.drift).length} not in the held state)\n`
      : '';
  return `${table}\n${drifting} of ${windowed.length} workspace(s) differ from their window's desired state${drifting > 0 ? '' : ' (none)'}\n${strandedLine}${idleLine}`;
}

function parseSince(text: string): Date {
  const ms = parseDuration(text);
  if (ms !== undefined && ms > 0) return new Date(Date.now() - ms);
  const date = new Date(text);
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && !Number.isNaN(date.getTime())) return date;
  throw new InvalidArgumentError('expected a duration such as 30d or 12h, or a date such as 2026-11-01');
}

/** The savings table and totals. */
export function formatSavings(report: SavingsReport): string {
  const money = (value: number | null) => (value === null ? '-' : `${value.toFixed(2)} ${report.currency}`);
  const rows = report.workspaces.map((w) => [
    `${w.workgroup}/${w.workspace}`,
    w.pausedHours.toFixed(2),
    money(w.estimatedCost),
  ]);
  const table =
    rows.length > 0 ? `${alignColumns([['WORKSPACE', 'PAUSED HOURS', 'EST. COST AVOIDED'], ...rows])}\n` : '';
  const cost =
    report.totalEstimatedCost === null ? 'no price table in the policy' : money(report.totalEstimatedCost);
  return `${table}${report.totalPausedHours.toFixed(2)} hours paused by nightshift from ${report.since} to ${report.until}; estimated cost avoided: ${cost}\n`;
}

export function registerDriftCommands(program: Command, settings: Settings): void {
  program
    .command('drift <policy>')
    .description("compare every workspace under the policy's windows with the state its window wants now")
    .option('--json', 'print the rows as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Reads the fleet (one listing) and, from Redis, the ownership ledger, holds and windows’ state.',
        'A workspace nightshift paused (its pause journal says so) that nobody owns any more is stranded: nothing',
        'would hand it back; `nightshift adopt <window|job>` makes its owner own it again.',
        'Exit codes: 0 every workspace as its window wants (held ones aside) and none stranded, 3 some differ or',
        'are stranded, 1 it could not tell, 2 bad usage.',
        '',
        'Examples:',
        '  nightshift drift config/policy.yaml',
        "  nightshift drift config/policy.yaml --json | jq '.[] | select(.drift)'",
      ].join('\n'),
    )
    .action(async (file: string, flags: { json?: boolean }) => {
      const policy = await loadOrReport(file, policyCommandDeps(settings));
      if (!policy) return;
      const log = cliLogger(settings, 'stderr');
      const api = commandApiClient(settings, log);
      const runtime = redisRuntime(settings, log, 'cli', { oneShot: true });
      let rows: DriftRow[];
      try {
        rows = await driftRows(policy, api, runtime.state, new Date());
      } finally {
        await runtime.close();
        await api.close();
      }
      process.stdout.write(
        flags.json
          ? `${JSON.stringify(rows, null, 2)}\n`
          : formatDrift(rows, painterFor(process.stdout, settings.terminal)),
      );
      process.exitCode = rows.some(counts) ? EXIT.findings : EXIT.ok;
    });

  program
    .command('savings')
    .description('hours each workspace spent paused by nightshift, and the estimated cost avoided')
    .option('--since <when>', 'from this long ago (30d, 12h) or this date', parseSince)
    .option('--json', 'print { since, until, currency, totalPausedHours, totalEstimatedCost, workspaces }')
    .addHelpText(
      'after',
      [
        '',
        'Only time nightshift owned counts: from the pause it made to its resume, or to the moment the workspace',
        'was seen running again. A workspace someone else stopped is never counted. Costs use the price table',
        '(`pricing:`) of the policy in force when each pause was made. Default: the last 30 days.',
        '',
        'Examples:',
        '  nightshift savings',
        '  nightshift savings --since 7d --json',
      ].join('\n'),
    )
    .action(async (flags: { since?: Date; json?: boolean }) => {
      const until = new Date();
      const since = flags.since ?? new Date(until.getTime() - 30 * 86_400_000);
      if (since.getTime() >= until.getTime()) throw new UsageError('--since must be in the past');
      const runtime = redisRuntime(settings, cliLogger(settings, 'stderr'), 'cli', { oneShot: true });
      let report: SavingsReport;
      try {
        report = await savingsSince(runtime.state.ledger, since, until);
      } finally {
        await runtime.close();
      }
      process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatSavings(report));
    });
}

import { type Command, InvalidArgumentError } from 'commander';
import type { Settings } from '../../config/index.js';
import {
  describeInstant,
  didYouMean,
  type Firing,
  nextFirings,
  nextWindowEdges,
  type PolicyJob,
} from '../../policy/index.js';
import type { Suspension } from '../../store/index.js';
import { describeSuspension, loadOrReport, type PolicyCommandDeps, policyCommandDeps } from '../policy-io.js';
import { redisSuspensions } from '../runtime.js';
import { alignColumns } from '../table.js';

const MAX_COUNT = 1000;

function parseCount(text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 1 || count > MAX_COUNT) {
    throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_COUNT}`);
  }
  return count;
}

function parseFrom(text: string): Date {
  // Without an offset the instant would depend on the machine's zone.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) {
    throw new InvalidArgumentError(
      'expected an ISO 8601 instant with Z or an offset, e.g. 2026-03-29T00:00:00Z',
    );
  }
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new InvalidArgumentError('not a valid date and time');
  return date;
}

interface NextOptions {
  readonly job?: string;
  readonly count: number;
  readonly from?: Date;
  readonly json?: boolean;
}

/** One upcoming firing, as `--json` prints it; a window's are its uptime edges. */
export interface UpcomingFiring {
  readonly job: string;
  readonly at: string;
  readonly local: string;
  /** For a window: whether its uptime starts (workspaces resumed) or ends (paused) then. */
  readonly edge?: 'uptime starts' | 'uptime ends';
}

/**
 * A job's next firings; a window's next uptime edges (it is also reconciled every `every`, which
 * would drown the list).
 */
function firingsOf(job: PolicyJob, from: Date, count: number): (Firing & { up?: boolean })[] {
  if (job.window) return nextWindowEdges(job.window, from, count);
  return nextFirings(job.schedule, { from, count, skipDates: job.skipDates });
}

export function upcomingFirings(jobs: readonly PolicyJob[], from: Date, count: number): UpcomingFiring[] {
  const rows = jobs.flatMap((job, order) =>
    firingsOf(job, from, count).map((firing) => ({
      order,
      instant: firing.at.getTime(),
      row: {
        job: job.name,
        ...describeInstant(firing.at, job.timezone),
        ...(firing.up === undefined ? {} : { edge: firing.up ? 'uptime starts' : 'uptime ends' }),
      } as UpcomingFiring,
    })),
  );
  rows.sort((a, b) => a.instant - b.instant || a.order - b.order);
  return rows.map((entry) => entry.row);
}

/** Redis suspensions when Redis is configured; a Redis that cannot be read is reported, not fatal. */
async function readSuspensions(
  deps: PolicyCommandDeps,
): Promise<ReadonlyMap<string, Suspension> | undefined> {
  try {
    return await deps.suspensions();
  } catch (error) {
    deps.stderr(
      `warning: could not read suspensions from Redis (${(error as Error).message}); jobs suspended with "nightshift suspend" are listed as if they were not\n`,
    );
    return undefined;
  }
}

export function registerNextCommand(
  program: Command,
  settings: Settings,
  overrides: Partial<PolicyCommandDeps> = {},
): void {
  program
    .command('next')
    .description(
      'list upcoming firings of the jobs in a policy, and the uptime edges of its windows, in time order (calendar skips left out)',
    )
    .argument('<file>', 'policy file (YAML)')
    .option('--job <name>', 'only this job')
    .option('--count <n>', `firings per job (1-${MAX_COUNT})`, parseCount, 5)
    .option(
      '--from <iso>',
      'list firings after this instant instead of now, e.g. 2026-03-29T00:00:00Z',
      parseFrom,
    )
    .option('--json', 'print [{ "job", "at", "local", "edge"? }] instead of a table')
    .addHelpText(
      'after',
      [
        '',
        'Jobs suspended in the policy, or with "nightshift suspend" when REDIS_URL is set, are named, not listed.',
        'A window is listed by its uptime edges (uptime starts: what it paused is resumed; ends: its workspaces are',
        'paused); it is also reconciled every `every` in between.',
        '',
        'Examples:',
        '  nightshift next config/examples/cost-saving.yaml',
        '  nightshift next config/examples/cost-saving.yaml --job berlin-evening-pause --count 10',
        '  nightshift next config/examples/cost-saving.yaml --from 2026-03-29T00:00:00Z --count 3 --json',
      ].join('\n'),
    )
    .action(async (file: string, options: NextOptions, command: Command) => {
      // jobs suspended with `nightshift suspend` are left out, when Redis is configured
      const deps = policyCommandDeps(settings, {
        suspensions: () => redisSuspensions(settings),
        ...overrides,
      });
      const policy = await loadOrReport(file, deps);
      if (!policy) return;
      let jobs = policy.jobs;
      if (options.job !== undefined) {
        const names = jobs.map((job) => job.name);
        if (!names.includes(options.job)) {
          const hint = didYouMean(options.job, names);
          command.error(
            `error: unknown job "${options.job}"${hint ? `; did you mean "${hint}"?` : ''} (jobs in ${file}: ${names.join(', ')})`,
            {
              exitCode: 2,
              code: 'nightshift.unknownJob',
            },
          );
        }
        jobs = jobs.filter((job) => job.name === options.job);
      }
      const inRedis = await readSuspensions(deps);
      const suspended = jobs.flatMap((job) => {
        const record = inRedis?.get(job.name);
        if (record) return [`${job.name} (${describeSuspension(record)})`];
        return job.suspend ? [job.name] : [];
      });
      const upcoming = upcomingFirings(
        jobs.filter((job) => !job.suspend && !inRedis?.has(job.name)),
        options.from ?? deps.now(),
        options.count,
      );
      if (options.json) {
        deps.stdout(`${JSON.stringify(upcoming, null, 2)}\n`);
        return;
      }
      // the WHAT column only when a window's edges are listed
      const edges = upcoming.some((row) => row.edge);
      const table = alignColumns([
        ['AT (UTC)', 'LOCAL', 'JOB', ...(edges ? ['WHAT'] : [])],
        ...upcoming.map((row) => [row.at, row.local, row.job, ...(edges ? [row.edge ?? 'fires'] : [])]),
      ]);
      const note = suspended.length > 0 ? `\nsuspended, not listed: ${suspended.join(', ')}` : '';
      deps.stdout(`${table}${note}\n`);
    });
}

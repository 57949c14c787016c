import { z } from 'zod';
import { insecureHttpAllowed, plainHttpProblem } from '../config/index.js';
import type { ActionCatalog, ActionCatalogEntry } from './action-catalog.js';
import type { PolicyProblem } from './errors.js';
import type { PolicyEnv } from './interpolate.js';
import { parseWithProblems, problemAt, warningAt } from './issues.js';
import type { ValuePath } from './paths.js';
import { checkCron, frequencyWarning } from './schedule.js';
import { type PolicySecrets, readsSecret } from './secrets.js';
import { listNames, suggestionSuffix } from './suggest.js';
import { canonicalTimeZone, fixedOffsetRefusal, isTimeZone, suggestTimeZone } from './timezone.js';
import type { YamlSource } from './yaml/index.js';

/**
 * Checks that need more than one node's structure: cron expressions, time zones, references
 * between sections, and each action's own rules. They read the raw values, so they run on every
 * job even when zod found structural problems in it, and all problems come out in one pass.
 */
export interface CheckContext extends Shown {
  readonly registry: ActionCatalog;
  readonly targets: ReadonlySet<string>;
  readonly calendars: ReadonlySet<string>;
  readonly notifications: ReadonlySet<string>;
  /** Every job of the policy by name, with its `action:` as written (for references between jobs). */
  readonly jobActions: ReadonlyMap<string, unknown>;
}

export type RawMap = Readonly<Record<string, unknown>>;

export function isMap(value: unknown): value is RawMap {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What a message may show of a value: its source, and which variables are secrets. */
export interface Shown {
  readonly source: YamlSource;
  readonly secrets: Pick<PolicySecrets, 'names'>;
}

/** Whether the string at `path` read a secret variable: then no message shows its value. */
function hides({ source, secrets }: Shown, path: ValuePath): boolean {
  return readsSecret(source, secrets, path);
}

/**
 * A value for a message, quoted, and where it came from when that was a `${VAR}`. A value read from
 * a secret is shown as the file writes it instead: `from "${DB_PASSWORD}"`.
 */
function shown(context: Shown, path: ValuePath, value: string): string {
  const template = context.source.templateOf(path);
  if (template === undefined) return JSON.stringify(value);
  return hides(context, path)
    ? `from ${JSON.stringify(template)}`
    : `${JSON.stringify(value)} (from ${JSON.stringify(template)})`;
}

function suggestion(context: Shown, path: ValuePath, value: string, candidates: Iterable<string>): string {
  return hides(context, path) ? '' : suggestionSuffix(value, candidates);
}

export function checkTimeZone(context: Shown, path: ValuePath, value: unknown): PolicyProblem[] {
  if (typeof value !== 'string' || value === '') return [];
  const { source } = context;
  if (isTimeZone(value)) {
    const refusal = fixedOffsetRefusal(value);
    if (refusal) {
      // a secret zone's offset and the zone it suggests would tell what it is
      const reason = hides(context, path) ? 'is a fixed UTC offset, without daylight saving time' : refusal;
      return [problemAt(source, path, `time zone ${shown(context, path, value)} ${reason}`)];
    }
    // the schema reads it as this spelling
    const canonical = canonicalTimeZone(value);
    if (canonical === value) return [];
    const as = hides(context, path) ? 'its IANA name' : `"${canonical}", its IANA name`;
    return [warningAt(source, path, `time zone ${shown(context, path, value)} is read as ${as}; write that`)];
  }
  const hint = hides(context, path) ? undefined : suggestTimeZone(value);
  const tail = hint ? `; did you mean "${hint}"?` : '; expected an IANA name such as Europe/Berlin or UTC';
  return [problemAt(source, path, `unknown time zone ${shown(context, path, value)}${tail}`)];
}

function checkReference(
  context: CheckContext,
  path: ValuePath,
  value: unknown,
  kind: { singular: string; plural: string; section: string },
  defined: ReadonlySet<string>,
): PolicyProblem[] {
  if (typeof value !== 'string' || value === '' || defined.has(value)) return [];
  const { source } = context;
  const tail =
    defined.size === 0
      ? `; no ${kind.plural} are defined under "${kind.section}:"`
      : `${suggestion(context, path, value, defined)} (defined ${kind.plural}: ${listNames(defined)})`;
  return [problemAt(source, path, `unknown ${kind.singular} ${shown(context, path, value)}${tail}`)];
}

const CALENDAR = { singular: 'calendar', plural: 'calendars', section: 'calendars' };
const NOTIFICATION = { singular: 'notification', plural: 'notifications', section: 'notifications' };
const TARGET = { singular: 'target', plural: 'targets', section: 'targets' };

export function checkNotify(context: CheckContext, path: ValuePath, value: unknown): PolicyProblem[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((name, index) =>
    checkReference(context, [...path, index], name, NOTIFICATION, context.notifications),
  );
}

/**
 * A webhook URL in plain http:// to a host beyond loopback, unless the environment the policy reads
 * allows it (`NIGHTSHIFT_ALLOW_INSECURE_HTTP=true`): its path, where services keep the secret, and
 * every message would cross the network unencrypted. The problem names the host, never the URL.
 */
export function checkNotificationUrls(
  source: YamlSource,
  notifications: unknown,
  env: PolicyEnv,
): PolicyProblem[] {
  if (!isMap(notifications)) return [];
  const allowed = insecureHttpAllowed(env);
  return Object.entries(notifications).flatMap(([name, sink]) => {
    const url = isMap(sink) ? sink.url : undefined;
    const problem =
      typeof url === 'string'
        ? plainHttpProblem(url, "the webhook's URL and every message", allowed)
        : undefined;
    return problem ? [problemAt(source, ['notifications', name, 'url'], problem)] : [];
  });
}

/** A `target:` naming a selector under `targets:` must name one that exists. */
export function checkTarget(context: CheckContext, path: ValuePath, value: unknown): PolicyProblem[] {
  return typeof value === 'string' ? checkReference(context, path, value, TARGET, context.targets) : [];
}

/** Every calendar a `skip:` names must exist. */
export function checkCalendarNames(context: CheckContext, path: ValuePath, value: unknown): PolicyProblem[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((calendar, index) =>
    checkReference(context, [...path, index], calendar, CALENDAR, context.calendars),
  );
}

/**
 * A calendar whose every date is over, in every time zone: jobs that skip it skip nothing, which
 * is most likely last year's holidays still waiting for this year's.
 */
export function checkCalendars(context: Shown, calendars: unknown, now: Date): PolicyProblem[] {
  if (!isMap(calendars)) return [];
  // a date is over everywhere once it is over at UTC-12, the last zone to finish a day
  const today = new Date(now.getTime() - 12 * 3_600_000).toISOString().slice(0, 10);
  const problems: PolicyProblem[] = [];
  for (const [name, dates] of Object.entries(calendars)) {
    if (!Array.isArray(dates) || dates.length === 0) continue;
    if (!dates.every((date) => typeof date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(date))) continue;
    const last = (dates as string[]).toSorted().at(-1) as string;
    if (last >= today) continue;
    const path: ValuePath = ['calendars', name];
    const lastIndex = dates.indexOf(last);
    const named = hides(context, [...path, lastIndex]) ? '' : ` (the last is ${last})`;
    problems.push(
      warningAt(
        context.source,
        path,
        `every date is in the past${named}: jobs that skip it skip nothing`,
        'key',
      ),
    );
  }
  return problems;
}

export interface JobCheck {
  readonly problems: PolicyProblem[];
  /** The `with:` parameters as the action's schema parsed them. */
  readonly params: Readonly<Record<string, unknown>> | undefined;
}

export function checkJob(context: CheckContext, name: string, job: unknown): JobCheck {
  if (!isMap(job)) return { problems: [], params: undefined };
  const { source, registry } = context;
  const at: ValuePath = ['jobs', name];
  const problems: PolicyProblem[] = [];

  if (typeof job.schedule === 'string' && job.schedule !== '') {
    const path = [...at, 'schedule'];
    const cron = checkCron(job.schedule);
    if (!cron.ok)
      problems.push(
        problemAt(
          source,
          path,
          `invalid cron expression ${shown(context, path, job.schedule)}: ${cron.message}`,
        ),
      );
    const warning = cron.ok && !hides(context, path) ? frequencyWarning(job.schedule) : undefined;
    if (warning) problems.push(warningAt(source, path, `${JSON.stringify(job.schedule)} ${warning}`));
  }
  problems.push(...checkTimeZone(context, [...at, 'timezone'], job.timezone));
  problems.push(...checkNotify(context, [...at, 'notify'], job.notify));
  problems.push(...checkTarget(context, [...at, 'target'], job.target));
  problems.push(...checkCalendarNames(context, [...at, 'skip'], job.skip));

  if (typeof job.action !== 'string' || job.action === '') return { problems, params: undefined };
  const action = registry.get(job.action);
  if (!action) {
    const path = [...at, 'action'];
    const tail = suggestion(context, path, job.action, registry.keys());
    problems.push(
      problemAt(
        source,
        path,
        `unknown action ${shown(context, path, job.action)}${tail} (valid actions: ${listNames([...registry.keys()].sort())})`,
      ),
    );
    return { problems, params: undefined };
  }
  problems.push(...checkActionRules(context, at, job, action));
  problems.push(...checkJobReferences(context, at, job, action));
  if (job.with !== undefined && !isMap(job.with)) return { problems, params: undefined };
  if (job.with === undefined) {
    const required = requiredParams(action);
    if (required.length > 0) {
      const needs = `action "${action.name}" needs ${required.join(', ')}`;
      problems.push(problemAt(source, at, `missing required key "with" (${needs})`, 'key'));
      return { problems, params: undefined };
    }
  }
  const parsed = parseWithProblems(action.params, job.with ?? {}, source, {
    at: [...at, 'with'],
    noKeysHint: `action "${action.name}" takes no parameters`,
  });
  problems.push(...parsed.problems);
  return { problems, params: parsed.data as Readonly<Record<string, unknown>> | undefined };
}

function checkActionRules(
  context: CheckContext,
  at: ValuePath,
  job: RawMap,
  action: ActionCatalogEntry,
): PolicyProblem[] {
  const { source } = context;
  const problems: PolicyProblem[] = [];
  if (action.destructive && job.confirm !== true) {
    problems.push(
      job.confirm === false
        ? problemAt(source, [...at, 'confirm'], `must be true: action "${action.name}" is destructive`)
        : problemAt(
            source,
            [...at, 'action'],
            `action "${action.name}" is destructive: add "confirm: true" to the job`,
          ),
    );
  }
  if (action.scope !== 'none' && !action.targetOptional && job.target === undefined) {
    const unit = action.scope === 'workspace' ? 'workspaces' : 'workgroups';
    problems.push(
      problemAt(
        source,
        at,
        `action "${action.name}" acts on ${unit}: add "target:" with a name from targets or a selector`,
        'key',
      ),
    );
  }
  if (action.scope === 'none' && job.target !== undefined) {
    problems.push(
      problemAt(
        source,
        [...at, 'target'],
        `action "${action.name}" takes no target; it acts on what its "with:" names`,
        'key',
      ),
    );
  }
  return problems;
}

/**
 * Parameters that name another job of the policy (`jobReferences`): it must exist and use the
 * action the parameter asks for. A did-you-mean and the list come from the jobs that would fit.
 */
function checkJobReferences(
  context: CheckContext,
  at: ValuePath,
  job: RawMap,
  action: ActionCatalogEntry,
): PolicyProblem[] {
  if (!action.jobReferences || !isMap(job.with)) return [];
  const { source, jobActions } = context;
  const problems: PolicyProblem[] = [];
  for (const [param, { action: wanted }] of Object.entries(action.jobReferences)) {
    const value = job.with[param];
    if (typeof value !== 'string' || value === '') continue;
    const referenced = jobActions.get(value);
    const known = jobActions.has(value);
    // a job whose action is missing or not a string has a problem of its own
    if (known && (referenced === wanted || typeof referenced !== 'string')) continue;
    const path = [...at, 'with', param];
    const fitting = [...jobActions].filter(([, jobAction]) => jobAction === wanted).map(([name]) => name);
    const tail =
      fitting.length === 0
        ? `; no job of this policy uses action "${wanted}"`
        : `${suggestion(context, path, value, fitting)} (${wanted} jobs: ${listNames(fitting)})`;
    const what = known
      ? `job ${shown(context, path, value)} uses action "${String(referenced)}", not "${wanted}"`
      : `unknown job ${shown(context, path, value)}`;
    problems.push(problemAt(source, path, `${what}${tail}`));
  }
  return problems;
}

/** The parameters an action cannot do without, for the message when `with:` is left out. */
function requiredParams(action: ActionCatalogEntry): readonly string[] {
  let required = requiredByAction.get(action);
  if (!required) {
    required =
      action.params instanceof z.ZodObject
        ? Object.entries(action.params.shape as Record<string, z.ZodType>)
            .filter(([, schema]) => !schema.safeParse(undefined).success)
            .map(([key]) => key)
        : action.params.safeParse({}).success
          ? []
          : ['parameters'];
    requiredByAction.set(action, required);
  }
  return required;
}

/** Asked for each job without `with:`: thousands of times of a few actions. */
const requiredByAction = new WeakMap<ActionCatalogEntry, readonly string[]>();

/** Each job's name with its `action:` as written, whatever else is wrong with the job, from `Object.entries(jobs)`. */
export function jobActions(jobs: readonly (readonly [string, unknown])[]): ReadonlyMap<string, unknown> {
  const actions = new Map<string, unknown>();
  for (const [name, job] of jobs) actions.set(name, isMap(job) ? job.action : undefined);
  return actions;
}

/** Names under a top-level section, whatever their values: a broken definition still defines its name. */
export function definedNames(section: unknown): ReadonlySet<string> {
  return new Set(isMap(section) ? Object.keys(section) : []);
}

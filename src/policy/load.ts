import { z } from 'zod';
import type { ActionCatalog } from './action-catalog.js';
import { type CheckContext, definedNames, isMap, jobActions, type RawMap } from './check.js';
import {
  type CheckedJob,
  type CheckedWindow,
  checkJobs,
  checkSharedSections,
  checkWindows,
} from './check-sections.js';
import {
  isWarning,
  PolicyError,
  type PolicyProblem,
  type Severity,
  type SourceLocation,
  sortProblems,
} from './errors.js';
import { readPolicyText, sizeProblem } from './file.js';
import type { PolicyEnv } from './interpolate.js';
import { kindOf, parseWithProblems, problemAt } from './issues.js';
import { applySettings, BUILTIN_DEFAULTS, type EffectiveSettings } from './job-settings.js';
import { type JobParameters, parameterPaths, withParameters } from './parameters.js';
import type { Pricing } from './pricing.js';
import { resolveTarget, resolveWindow } from './resolve-window.js';
import { jobRisks } from './risks.js';
import { checkCron, type Schedule, type ScheduleKind } from './schedule.js';
import {
  type Approval,
  type JobDocument,
  type MaxTargets,
  type NotificationSink,
  type PolicyDocument,
  policySchema,
  type StopAfter,
  type TargetSelector,
} from './schema.js';
import { hideSecrets, type PolicySecret, policySecrets } from './secrets.js';
import { checkWindowOverlaps } from './window-overlap.js';
import type { PolicyWindow } from './windows.js';
import { locatorOf, readYaml, type ValuePath, type YamlSource } from './yaml/index.js';

/** What a policy's `${VAR}`s may read. */
export interface PolicyVariables {
  /** Where `${VAR}` values come from: the environment the CLI read its Settings from. */
  readonly env: PolicyEnv;
  /** nightshift's own variables a policy may read after all (`NIGHTSHIFT_POLICY_ENV_ALLOW`). Default: none. */
  readonly allowEnv?: readonly string[];
}

export interface LoadPolicyOptions extends PolicyVariables {
  /** The actions jobs may use; `jobs/index.ts` exports the real one. */
  readonly registry: ActionCatalog;
  /** The instant calendars are judged past at. Default: now. */
  readonly now?: Date;
  /**
   * A run's parameters (`run --with`), merged into its job's `with:` before the job is checked, so
   * the job they make is checked as if the file declared it. Default: none.
   */
  readonly parameters?: JobParameters | undefined;
}

export interface CheckPolicyOptions extends LoadPolicyOptions {
  /**
   * What an unset `${VAR}` is. `warning` checks a policy where its secrets are not set (CI): the
   * strings holding one are not checked further. Default: error.
   */
  readonly unsetVariables?: Severity;
  /**
   * The one job or window a command will run (`run`, `plan --job`): an unset `${VAR}` of any other
   * job or window is only a warning, as in `validate`, and a job that cannot be read without it is
   * left out of the policy; the shared sections and this job keep `unsetVariables`. Default: all.
   */
  readonly only?: string;
}

/** What `checkPolicy` found. */
export interface PolicyCheck {
  /** Every error and warning, in file order. */
  readonly problems: readonly PolicyProblem[];
  /** The policy, unless an error refuses it or part of it cannot be read without an unset variable. */
  readonly policy: Policy | undefined;
}

/** A job's target: a named selector from `targets:`, or one written inline (no name). */
export interface JobTarget {
  readonly name: string | undefined;
  readonly selector: TargetSelector;
}

type JobFlags = { readonly [Key in 'dryRun' | 'confirm' | 'suspend']-?: NonNullable<JobDocument[Key]> };

/** One job with everything it inherits resolved. Durations are milliseconds. */
export interface PolicyJob extends EffectiveSettings, JobFlags {
  readonly name: string;
  /** `job` for an entry under `jobs:`; `window` for a window's reconciliation (see docs/windows.md). */
  readonly kind: 'job' | 'window';
  readonly description: JobDocument['description'];
  /** Cron jobs fire on `cron`; a window (`kind: 'window'`, no cron) fires as `window` says. */
  readonly schedule: Schedule & { readonly kind: ScheduleKind | 'window' };
  readonly action: JobDocument['action'];
  /** The `with:` parameters, as the action's schema parsed them. */
  readonly params: Readonly<Record<string, unknown>>;
  /**
   * The policy's secret values (docs/policy.md): whatever a run shows or stores has each as its
   * `${NAME}` (`hideSecrets`, applied by src/engine/redact.ts); only the action sees them.
   */
  readonly secrets: readonly PolicySecret[];
  readonly target: JobTarget | undefined;
  /** Calendar names from `skip:`, and the union of their dates (`YYYY-MM-DD`, local). */
  readonly skip: readonly string[];
  readonly skipDates: ReadonlySet<string>;
  readonly maxTargets: MaxTargets | undefined;
  /** When a run stops starting targets because too many failed; undefined: the action's default. */
  readonly stopAfter: StopAfter | undefined;
  /** Whether runs wait for a person's approval before they act; absent: they do not. */
  readonly approval?: Approval | undefined;
  /** The job's name in the file, for messages about it (e.g. a run refused by maxTargets). */
  readonly location: SourceLocation;
  /** A window's uptime and rules; undefined for a job. */
  readonly window?: PolicyWindow;
  /** `expectSuccessWithin` (ms): the job is overdue after this long without a success; undefined: by its firings. */
  readonly expectSuccessWithin?: number | undefined;
}

/** A loaded, valid policy. */
export interface Policy {
  readonly file: string;
  readonly version: PolicyDocument['version'];
  /** `defaults:` over the built-in defaults. */
  readonly defaults: EffectiveSettings;
  readonly calendars: Readonly<Record<string, readonly string[]>>;
  readonly targets: Readonly<Record<string, TargetSelector>>;
  readonly notifications: Readonly<Record<string, NotificationSink>>;
  /** What an hour of each workspace type costs, for savings; undefined without `pricing:`. */
  readonly pricing: Pricing | undefined;
  /** The values of its secret variables: show anything taken from the policy through `hideSecrets`. */
  readonly secrets: readonly PolicySecret[];
  /** Jobs in file order, then windows in file order (`kind` tells them apart). */
  readonly jobs: readonly PolicyJob[];
  /** The location of any node, by path (`['jobs', 'nightly', 'maxTargets']`). */
  locate(path: ValuePath): SourceLocation;
  /** What is probably a mistake but leaves the policy valid, in file order. */
  readonly warnings: readonly PolicyProblem[];
}

/** The top level, with each job left for its own parse so one bad job cannot hide the others' problems. */
const OutlineSchema = policySchema(z.unknown(), z.unknown());

/**
 * Parses and validates a policy. Throws a PolicyError listing every problem found, each at its
 * YAML node; syntax errors stop the check early, since the tree behind them is not reliable.
 * Warnings are in the policy's `warnings` (or the error's).
 */
export function parsePolicy(text: string, file: string, options: LoadPolicyOptions): Policy {
  const { problems, policy } = checkPolicy(text, file, { ...options, unsetVariables: 'error' });
  if (!policy) throw new PolicyError(problems);
  return policy;
}

/** Every problem of a policy, errors and warnings, and the policy when it is usable. */
export function checkPolicy(text: string, file: string, options: CheckPolicyOptions): PolicyCheck {
  const tooLarge = sizeProblem(file, Buffer.byteLength(text, 'utf8'));
  if (tooLarge) return { problems: [tooLarge], policy: undefined };
  const read = readYaml(text, file, options.env, {
    unsetVariables: unsetFor(options),
    allowEnv: options.allowEnv,
  });
  if (read.value === undefined) return { problems: sortProblems(read.problems), policy: undefined };
  if (!isMap(read.value)) {
    const got = read.value === null ? 'the file is empty' : `got ${kindOf(read.value)}`;
    const refused = problemAt(read, [], `expected a map with "version" and "jobs"; ${got}`);
    return { problems: sortProblems([...read.problems, refused]), policy: undefined };
  }
  const given = options.parameters
    ? withParameters(read, options.parameters, options)
    : { source: read, problems: [] };
  const source = given.source;
  const root = source.value as RawMap;
  const problems: PolicyProblem[] = [...source.problems, ...given.problems];

  const outline = parseWithProblems(OutlineSchema, root, source, { at: [] });
  problems.push(...outline.problems);
  const secrets = policySecrets(source, root.secrets);
  problems.push(...secrets.problems);
  // listed once: a map of 10,000 jobs is slow to list
  const jobEntries = Object.entries(isMap(root.jobs) ? root.jobs : {});
  const context: CheckContext = {
    source,
    secrets,
    registry: options.registry,
    targets: definedNames(root.targets),
    calendars: definedNames(root.calendars),
    notifications: definedNames(root.notifications),
    jobActions: jobActions(jobEntries),
  };
  checkSharedSections(context, root, options, problems);
  const jobs = checkJobs(context, jobEntries, problems);
  const missing = missingJobsProblem(source, root);
  if (missing) problems.push(missing);
  const windows = checkWindows(context, root, problems);
  const targets = outline.data?.targets ?? {};
  problems.push(
    ...checkWindowOverlaps(
      context,
      windows.map(({ name, document }) => ({
        name,
        selector: document && resolveTarget(document.target, targets)?.selector,
      })),
    ),
  );

  // a check that quotes what it refused (an action's own schema, say) quotes no secret either
  const hide = hideSecrets(secrets.values);
  const hideIn = (problem: PolicyProblem) => ({ ...problem, message: hide(problem.message) });
  const found = sortProblems(withoutEchoes(source.problems, problems)).map(hideIn);
  const warnings = found.filter(isWarning);
  // Without errors, a part still missing failed only on a string holding an unset variable.
  const needed = (name: string) => options.only === undefined || name === options.only;
  const usable =
    found.length === warnings.length &&
    jobs.every((job) => !needed(job.name) || (job.document && job.params)) &&
    windows.every((window) => !needed(window.name) || window.document);
  const outlineData = outline.data ?? (usable ? withoutNotifications(root) : undefined);
  const resolved =
    usable && outlineData
      ? resolve(outlineData, jobs, windows, { source, text, secrets: secrets.values, file, warnings })
      : undefined;
  // what a valid job would do: read from its resolved settings, so only of a usable policy
  const risks = resolved ? jobRisks(resolved.jobs, options.registry, source, root).map(hideIn) : [];
  if (!resolved || risks.length === 0) return { problems: found, policy: resolved };
  const all = sortProblems([...found, ...risks]);
  return { problems: all, policy: { ...resolved, warnings: all.filter(isWarning) } };
}

/**
 * A policy with neither `jobs:` nor `windows:` schedules nothing. A misspelt `jobs:` is already
 * reported as an unknown key, with a did-you-mean.
 */
function missingJobsProblem(source: YamlSource, root: RawMap): PolicyProblem | undefined {
  const unknownKeys = Object.keys(root).some((key) => !(key in OutlineSchema.shape));
  if (root.jobs !== undefined || root.windows !== undefined || unknownKeys) return undefined;
  return problemAt(
    source,
    ['version'],
    'missing required key "jobs" (or "windows"): a policy schedules at least one job or window',
    'key',
    [],
  );
}

/** What an unset variable is where, for `checkPolicy` (see `CheckPolicyOptions.only`). */
function unsetFor({
  unsetVariables = 'error',
  only,
  parameters,
}: CheckPolicyOptions): Severity | ((path: ValuePath) => Severity) {
  if (unsetVariables === 'warning' || (only === undefined && parameters === undefined)) return unsetVariables;
  // a value a parameter replaces is not read: the warning is dropped with the value (parameters.ts)
  const replaced = parameters ? parameterPaths(parameters) : () => false;
  return (path) =>
    replaced(path) ||
    (only !== undefined &&
      (path[0] === 'jobs' || path[0] === 'windows') &&
      path.length > 1 &&
      path[1] !== only)
      ? 'warning'
      : unsetVariables;
}

/**
 * The outline of a policy whose notification URLs come from unset variables (they are where
 * secrets sit outside jobs): checked without them, its jobs can still be listed.
 */
function withoutNotifications(root: RawMap): Outline | undefined {
  const rest = Object.fromEntries(Object.entries(root).filter(([key]) => key !== 'notifications'));
  return OutlineSchema.safeParse(rest).data;
}

/** Reads and parses a policy file; an unreadable file is a PolicyError too, so callers handle one error type. */
export async function loadPolicyFile(path: string, options: LoadPolicyOptions): Promise<Policy> {
  const { problems, policy } = await checkPolicyFile(path, { ...options, unsetVariables: 'error' });
  if (!policy) throw new PolicyError(problems);
  return policy;
}

/** `checkPolicy` of a file; a file that cannot be read, is too large or is not text is one problem at 1:1. */
export async function checkPolicyFile(path: string, options: CheckPolicyOptions): Promise<PolicyCheck> {
  const text = await readPolicyText(path);
  if (typeof text !== 'string') return { problems: [text], policy: undefined };
  return checkPolicy(text, path, options);
}

/**
 * Each problem once. An alias repeats its anchor's problems at the anchor's place, and a node the
 * reader already reported (a failed `${VAR}`, an unknown anchor) gets no second, derived problem
 * from the checks at the same place.
 */
function withoutEchoes(
  readProblems: readonly PolicyProblem[],
  problems: readonly PolicyProblem[],
): PolicyProblem[] {
  const readAt = new Set(readProblems.map((problem) => `${problem.line}:${problem.col}`));
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const place = `${problem.line}:${problem.col}`;
    const key = `${place}:${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return !readAt.has(place) || readProblems.includes(problem);
  });
}

type Outline = z.output<typeof OutlineSchema>;

function resolve(
  outline: Outline,
  jobs: readonly CheckedJob[],
  windows: readonly CheckedWindow[],
  {
    source,
    text,
    secrets,
    file,
    warnings,
  }: {
    source: YamlSource;
    text: string;
    secrets: readonly PolicySecret[];
    file: string;
    warnings: readonly PolicyProblem[];
  },
): Policy {
  const defaults = applySettings(BUILTIN_DEFAULTS, outline.defaults);
  const calendars = outline.calendars ?? {};
  const targets = outline.targets ?? {};
  const resolved: PolicyJob[] = [];
  // jobs skipping the same calendars share one set of dates
  const skipSets = new Map<string, ReadonlySet<string>>();
  const skipDatesOf = (skip: readonly string[]): ReadonlySet<string> => {
    const key = skip.join('\u0000');
    let dates = skipSets.get(key);
    if (!dates) {
      dates = new Set(skip.flatMap((calendar) => calendars[calendar] ?? []));
      skipSets.set(key, dates);
    }
    return dates;
  };
  for (const { name, document, params } of jobs) {
    // parsePolicy only gets here when every job parsed.
    if (!document || !params) continue;
    const settings = applySettings(defaults, document);
    const timezone = settings.timezone;
    const skip = document.skip ?? [];
    // Properties are listed one by one: an object spread followed by this many properties falls
    // off V8's fast path and cost 25 µs per job, a third of validating 10,000 jobs.
    resolved.push({
      name,
      kind: 'job',
      description: document.description,
      schedule: { cron: document.schedule, timezone, kind: checkCron(document.schedule).kind ?? 'fixed' },
      action: document.action,
      params,
      secrets,
      target: resolveTarget(document.target, targets),
      skip,
      skipDates: skipDatesOf(skip),
      maxTargets: document.maxTargets,
      stopAfter: document.stopAfter,
      ...(document.approval?.required ? { approval: document.approval } : {}),
      dryRun: document.dryRun ?? false,
      confirm: document.confirm ?? false,
      suspend: document.suspend ?? false,
      timezone,
      retry: settings.retry,
      timeout: settings.timeout,
      concurrency: settings.concurrency,
      overlap: settings.overlap,
      catchUp: settings.catchUp,
      notify: settings.notify,
      location: source.locate(['jobs', name], 'key'),
      expectSuccessWithin: document.expectSuccessWithin,
    });
  }
  const selectors = windows.flatMap(({ name, document }) => {
    const selector = document && resolveTarget(document.target, targets)?.selector;
    return selector ? [{ name, selector }] : [];
  });
  for (const { name, document } of windows) {
    if (!document) continue;
    const location = source.locate(['windows', name], 'key');
    resolved.push(
      resolveWindow(name, location, document, { defaults, calendars, targets, selectors, secrets }),
    );
  }
  return {
    file,
    version: outline.version,
    defaults,
    calendars,
    targets,
    notifications: outline.notifications ?? {},
    pricing: outline.pricing,
    secrets,
    jobs: resolved,
    locate: locatorOf(text, file),
    warnings,
  };
}

/** A problem about a job, at its name in the file: for later stages that refuse a run. */
export function jobProblem(job: Pick<PolicyJob, 'location'>, message: string): PolicyProblem {
  return { ...job.location, message };
}

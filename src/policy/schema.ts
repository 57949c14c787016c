import { z } from 'zod';
import { DURATION_PATTERN, parseDuration } from './duration.js';
import { globSyntaxProblem, negates } from './glob-syntax.js';
import { PricingSchema } from './pricing.js';
import { MaxTargetsSchema, StopAfterSchema } from './run-limits.js';
import { canonicalTimeZone } from './timezone.js';

/**
 * The policy file format as zod schemas: the single source of the policy's types (`z.output`),
 * its JSON Schema (`json-schema.ts`) and its structural checks. Checks that need the rest of the
 * file (does this target exist?) or the outside world (is this a time zone?) live in `check.ts`.
 */

export const SUPPORTED_VERSION = 1;

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const NameSchema = z
  .string()
  .regex(
    NAME_PATTERN,
    'a name starts with a letter or digit and goes on with letters, digits, ".", "_" or "-" (63 characters at most)',
  );

const DURATION_RULE = 'expected a duration like "90s", "15m", "2h" or "1h30m"';
/** How the message for a bare number starts; a union that takes durations reports it over its own. */
export const DURATION_NEEDS_UNIT = 'a duration needs a unit';

/** `waitReady: 20` is 20 what? The message says how to write each reading. */
function bareNumberRule(input: unknown): string | undefined {
  const amount = typeof input === 'number' ? String(input) : typeof input === 'string' ? input : '';
  if (!/^\d+$/.test(amount)) return typeof input === 'number' ? `${DURATION_RULE}, not a number` : undefined;
  return `${DURATION_NEEDS_UNIT}: write "${amount}m" for minutes or "${amount}s" for seconds (units: d, h, m, s)`;
}

function durationSchema(max: { ms: number; text: string }) {
  // Checks run on the string, before the transform, so each failure keeps its own message inside a
  // union; a string that is no duration at all stops at the first check.
  return z
    .string({ error: (issue) => bareNumberRule(issue.input) })
    .regex(DURATION_PATTERN, { error: (issue) => bareNumberRule(issue.input) ?? DURATION_RULE, abort: true })
    .refine((text) => (parseDuration(text) ?? 1) > 0, 'a duration must be longer than 0s')
    .refine((text) => (parseDuration(text) ?? 0) <= max.ms, `a duration here must be at most ${max.text}`)
    .transform((text) => parseDuration(text) ?? 0);
}

/** Durations are written `90s`, `15m`, `2h`, `1h30m`, `1d`; the loaded policy holds milliseconds. */
export const DurationSchema = durationSchema({ ms: 365 * 86_400_000, text: '365d' });

/** Timers above 2^31 ms (24.8 days) overflow in Node; a day is already far past any sane run. */
export const TimeoutSchema = durationSchema({ ms: 86_400_000, text: '24h' });

/** A webhook that takes longer than a minute to answer is down; its retries wait their turn. */
export const WebhookTimeoutSchema = durationSchema({ ms: 60_000, text: '1m' });

export const OVERLAP_POLICIES = ['skip', 'queue', 'allow'] as const;
export const RETRY_STRATEGIES = ['exponential', 'fixed'] as const;
/** In the order a message names them: what needs a person first, news last. */
export const NOTIFY_EVENTS = [
  'failure',
  'partial',
  'halted',
  'cancelled',
  'approval-needed',
  'overdue',
  'stranded',
  'drift-persists',
  'findings',
  'recovered',
  'acted',
  'succeeded',
] as const;
export const NOTIFY_FORMATS = ['slack', 'json'] as const;
/**
 * What a sink hears about when its `on:` is left out: the runs that need a person, a job that
 * stopped succeeding on time, and what a window did to the fleet (`acted`, at most once an edge).
 */
export const DEFAULT_NOTIFY_EVENTS: readonly NotifyEvent[] = [
  'failure',
  'partial',
  'halted',
  'cancelled',
  'approval-needed',
  'overdue',
  'stranded',
  'acted',
];

export const RetrySchema = z
  .strictObject({
    attempts: z
      .int()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'Tries in total, the first included; 1 turns retries off.', default: 5 }),
    backoff: DurationSchema.optional().meta({ description: 'Wait before the first retry.', default: '10s' }),
    strategy: z.enum(RETRY_STRATEGIES).optional().meta({
      description: 'exponential doubles the wait after each retry; fixed keeps it.',
      default: 'exponential',
    }),
  })
  .meta({
    description:
      'How each target of a run is retried (a run is never run again as a whole). Only transient API errors are retried.',
  });

export const CatchUpSchema = z
  .union([z.literal('none'), DurationSchema], { error: `${DURATION_RULE}, or none` })
  .transform((value) => (value === 'none' ? null : value));

export const SettingsSchema = z.strictObject({
  timezone: z
    .string()
    .min(1)
    // `europe/berlin` is read as Europe/Berlin; check.ts warns about the spelling
    .transform((zone) => canonicalTimeZone(zone) ?? zone)
    .optional()
    .meta({ description: 'IANA time zone the schedule is read in, e.g. Europe/Berlin.', default: 'UTC' }),
  retry: RetrySchema.optional(),
  timeout: TimeoutSchema.optional().meta({
    description: 'A run still going after this is cancelled.',
    default: '30m',
  }),
  concurrency: z
    .int()
    .min(1)
    .max(256)
    .optional()
    .meta({ description: 'API calls a run makes in parallel.', default: 16 }),
  overlap: z
    .enum(OVERLAP_POLICIES)
    .optional()
    .meta({ description: 'When a firing comes while the previous run still goes.', default: 'skip' }),
  catchUp: CatchUpSchema.optional().meta({
    description: 'After downtime, run a missed firing if it is at most this old; none never catches up.',
    default: 'none',
  }),
  notify: z
    .array(z.string().min(1))
    .optional()
    .meta({ description: 'Names from notifications that hear about runs.', default: [] }),
});

const GLOB_RULE = 'negated globs are not supported; list what to leave out under exclude';
const GlobSchema = z
  .string()
  .min(1)
  .refine((glob) => !negates(glob), GLOB_RULE)
  .superRefine((glob, context) => {
    const problem = globSyntaxProblem(glob);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });
const ExcludeGlobSchema = GlobSchema.refine(
  (glob) => glob.split('/').length <= 2,
  'expected "workgroup" or "workgroup/workspace" (globs), with at most one "/"',
);

export const TargetSelectorSchema = z
  .strictObject({
    workgroups: z
      .array(GlobSchema)
      .min(1)
      .meta({ description: 'Workgroup names or ids; globs (picomatch) such as "dev-*".' }),
    workspaces: z
      .array(GlobSchema)
      .min(1)
      .default(['*'])
      .meta({ description: 'Workspace names or ids within those workgroups; globs.' }),
    exclude: z.array(ExcludeGlobSchema).default([]).meta({
      description: '"workgroup/workspace" globs to leave out; a bare "workgroup" leaves out all of it.',
    }),
  })
  .meta({ description: 'Which workgroups and workspaces a job acts on.' });

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
function isCalendarDate(text: string): boolean {
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}
export const CalendarSchema = z
  .array(
    z
      .string()
      .regex(DATE_PATTERN, { error: 'expected a date like 2026-12-24', abort: true })
      .refine(isCalendarDate, 'not a date in the calendar'),
  )
  .meta({ description: 'Local dates (YYYY-MM-DD) on which jobs that skip this calendar do not fire.' });

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
export const NotificationSchema = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .refine(isHttpUrl, 'expected an http:// or https:// URL')
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
      .meta({ description: 'Webhook URL; keep it in the environment: "${OPS_WEBHOOK}".' }),
    format: z
      .enum(NOTIFY_FORMATS)
      .default('json')
      .meta({ description: 'Body shape: a Slack message or plain JSON.' }),
    on: z
      .array(z.enum(NOTIFY_EVENTS))
      .min(1)
      .default([...DEFAULT_NOTIFY_EVENTS])
      .meta({
        description:
          'Events that are sent: failure, partial, halted, cancelled, overdue (a job not succeeding on time), stranded, drift-persists, findings (new and resolved ones only), recovered, acted (a window paused or resumed workspaces), succeeded.',
      }),
    timeout: WebhookTimeoutSchema.prefault('10s').meta({
      description: 'How long one attempt waits for the webhook to answer.',
    }),
  })
  .meta({ description: 'A named webhook that jobs send run outcomes to.' });

/** The longest a run may wait for its approval: a week (a pending approval is a page, not a queue). */
const ApprovalExpirySchema = durationSchema({ ms: 7 * 86_400_000, text: '7d' });

/** A job whose runs wait for a person's approval, their plan attached, before they act. */
export const ApprovalSchema = z
  .strictObject({
    required: z.boolean().default(true).meta({ description: 'Whether runs wait for an approval.' }),
    expires: ApprovalExpirySchema.prefault('4h').meta({
      description: 'How long a run waits for its approval before it ends expired.',
    }),
    approvers: z.array(z.string().min(1)).min(1).optional().meta({
      description: 'Who may approve or reject; default: anyone allowed to approve (CLI, console approvers).',
    }),
  })
  .transform(
    (value): Approval => ({
      required: value.required,
      expiresMs: value.expires,
      approvers: value.approvers ?? [],
    }),
  )
  .meta({ description: "Runs wait, their plan attached, for a person's approval before they act." });

/** What a job's `approval:` says once loaded: `approvers` empty means anyone allowed to approve. */
export interface Approval {
  readonly required: boolean;
  readonly expiresMs: number;
  readonly approvers: readonly string[];
}

export const JobSchema = SettingsSchema.extend({
  description: z.string().optional().meta({ description: 'What the job is for; shown in listings.' }),
  schedule: z
    .string()
    .min(1)
    .meta({
      description: 'Cron: 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first.',
      examples: ['0 20 * * 1-5'],
    }),
  action: z.string().min(1).meta({ description: 'What the job does; one of the registered actions.' }),
  target: z
    .union([z.string().min(1), TargetSelectorSchema], {
      error: 'expected the name of a target, or a selector with workgroups',
    })
    .optional()
    .meta({ description: 'A name from targets, or an inline selector.' }),
  with: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "The action's parameters, checked by the action's own schema." }),
  skip: z
    .array(z.string().min(1))
    .optional()
    .meta({ description: 'Calendars whose dates the job does not fire on.' }),
  maxTargets: MaxTargetsSchema.optional(),
  stopAfter: StopAfterSchema.optional(),
  approval: ApprovalSchema.optional(),
  dryRun: z.boolean().optional().meta({ description: 'Plan and log, but change nothing.', default: false }),
  confirm: z
    .boolean()
    .optional()
    .meta({ description: 'Must be true for a destructive action.', default: false }),
  suspend: z
    .boolean()
    .optional()
    .meta({ description: 'Keep the job defined but never fire it.', default: false }),
  expectSuccessWithin: DurationSchema.optional().meta({
    description:
      'Raise overdue when the job has not succeeded for this long. Default: when two of its firings (and its timeout) have passed since its last success.',
    examples: ['26h'],
  }),
});

export const WINDOW_RESUME_MODES = ['owned', 'all', 'none'] as const;
export type WindowResumeMode = (typeof WINDOW_RESUME_MODES)[number];

/** The shortest reconciliation interval: anything tighter is a poll loop, not a schedule. */
export const MIN_EVERY_MS = 1000;

const EverySchema = DurationSchema.refine(
  (ms) => ms >= MIN_EVERY_MS,
  'a window is reconciled at most every 1s',
);

/** `0s` is a valid grace period (the default): unlike other durations, it may be zero. */
const GraceSchema = z.union([z.literal('0s').transform(() => 0), DurationSchema], {
  error: 'expected a duration like "0s", "30m" or "2h"',
});

/** Windows share these settings with jobs (and inherit them from `defaults:` the same way). */
const SharedWithJobs = SettingsSchema.pick({
  timezone: true,
  retry: true,
  timeout: true,
  concurrency: true,
  notify: true,
});

export const WindowSchema = SharedWithJobs.extend({
  description: z.string().optional().meta({ description: 'What the window is for; shown in listings.' }),
  target: z
    .union([z.string().min(1), TargetSelectorSchema], {
      error: 'expected the name of a target, or a selector with workgroups',
    })
    .meta({ description: 'A name from targets, or an inline selector: the workspaces the window keeps.' }),
  uptime: z
    .string()
    .min(1)
    .meta({
      description:
        'When the workspaces should run: days (Mon..Sun, ranges and commas) and HH:MM-HH:MM, several joined by ", "; 24:00 ends a day; a range may cross midnight. Outside it they are paused.',
      examples: ['Mon-Fri 07:30-19:30', 'Mon-Fri 08:00-18:00, Sat 09:00-13:00'],
    }),
  skip: z
    .array(z.string().min(1))
    .optional()
    .meta({ description: 'Calendars whose days are entirely outside uptime (holidays).' }),
  enforce: z.boolean().optional().meta({
    description:
      'true: a workspace found Active outside uptime is paused again (and with resume: all, one found Stopped in uptime is resumed); false: it is left and reported as drift.',
    default: false,
  }),
  resume: z.enum(WINDOW_RESUME_MODES).optional().meta({
    description:
      'What uptime brings back: owned (what the window paused), all (every Stopped workspace of the target), none.',
    default: 'owned',
  }),
  every: EverySchema.optional().meta({
    description: 'How often the window is reconciled besides its edges (at least 1s).',
    default: '5m',
  }),
  grace: GraceSchema.optional().meta({
    description: 'A workspace created less than this ago is left alone.',
    default: '0s',
  }),
  driftPersistsAfter: z.int().min(1).max(1000).optional().meta({
    description:
      'Consecutive reconciliations that leave the same workspaces drifting before drift-persists is raised (once per streak).',
    default: 3,
  }),
  maxTargets: MaxTargetsSchema.optional(),
  stopAfter: StopAfterSchema.optional(),
  dryRun: z.boolean().optional().meta({ description: 'Plan and log, but change nothing.', default: false }),
  suspend: z
    .boolean()
    .optional()
    .meta({ description: 'Keep the window defined but never reconcile it.', default: false }),
}).meta({ description: 'A desired state over time for a target: paused outside uptime, reconciled.' });

export type WindowDocument = z.output<typeof WindowSchema>;

export const VersionSchema = z.literal(SUPPORTED_VERSION, {
  error: (issue) =>
    issue.input === undefined
      ? `missing required key "version"; add "version: ${SUPPORTED_VERSION}"`
      : typeof issue.input === 'number'
        ? `unsupported version ${issue.input}; the supported version is ${SUPPORTED_VERSION}`
        : `expected the number ${SUPPORTED_VERSION}, the supported version`,
});

/** The whole file, with `job` and `window` as the schemas of each entry under `jobs` and `windows`. */
export function policySchema<Job extends z.ZodType, Window extends z.ZodType>(job: Job, window: Window) {
  return z.strictObject({
    version: VersionSchema.meta({ description: 'Format version of this file.' }),
    defaults: SettingsSchema.optional().meta({
      description: 'Settings every job inherits unless it sets its own.',
    }),
    calendars: z.record(NameSchema, CalendarSchema).optional().meta({ description: 'Named lists of dates.' }),
    targets: z
      .record(NameSchema, TargetSelectorSchema)
      .optional()
      .meta({ description: 'Named target selectors.' }),
    notifications: z
      .record(NameSchema, NotificationSchema)
      .optional()
      .meta({ description: 'Named webhooks for run outcomes.' }),
    jobs: z.record(NameSchema, job).optional().meta({ description: 'The scheduled jobs, by name.' }),
    windows: z
      .record(NameSchema, window)
      .optional()
      .meta({ description: 'Desired states over time (uptime), reconciled; see docs/windows.md.' }),
    pricing: PricingSchema.optional(),
    secrets: z
      .array(
        z.string().regex(
          /^[A-Za-z_][A-Za-z0-9_]*$/,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
          'expected a variable name, as "${NAME}" writes it: letters, digits and "_", not starting with a digit',
        ),
      )
      .optional()
      .meta({
        description:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
          'Variables whose values are secrets, shown as ${NAME} wherever they are used; so are those named like one (password, token, secret, key, auth, …) and those a notification url reads.',
      }),
  });
}

export const PolicySchema = policySchema(JobSchema, WindowSchema);

/** The file as written, parsed: durations in ms, defaults of selectors and sinks filled in. */
export type PolicyDocument = z.output<typeof PolicySchema>;
export type JobDocument = z.output<typeof JobSchema>;
export type Settings = z.output<typeof SettingsSchema>;
export type TargetSelector = z.output<typeof TargetSelectorSchema>;
export type NotificationSink = z.output<typeof NotificationSchema>;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export { type MaxTargets, MaxTargetsSchema, type StopAfter, StopAfterSchema } from './run-limits.js';

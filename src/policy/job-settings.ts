import type { Settings } from './schema.js';

/** Every setting a job inherits, resolved: durations in milliseconds, `catchUp: none` as null. */
export type EffectiveSettings = {
  readonly [Key in keyof Settings]-?: Key extends 'retry'
    ? Readonly<Required<NonNullable<Settings['retry']>>>
    : Exclude<Settings[Key], undefined>;
};

/** What a job gets when neither it nor `defaults:` sets a value (docs/policy.md lists the same). */
export const BUILTIN_DEFAULTS: EffectiveSettings = {
  timezone: 'UTC',
  retry: { attempts: 5, backoff: 10_000, strategy: 'exponential' },
  timeout: 30 * 60_000,
  concurrency: 16,
  overlap: 'skip',
  catchUp: null,
  notify: [],
};

/**
 * The job's own settings over the inherited ones. `retry` merges field by field, so a job can
 * change `attempts` and keep the default backoff; every other setting replaces as a whole.
 */
export function applySettings(base: EffectiveSettings, own: Settings | undefined): EffectiveSettings {
  if (!own) return base;
  return {
    timezone: own.timezone ?? base.timezone,
    retry: {
      attempts: own.retry?.attempts ?? base.retry.attempts,
      backoff: own.retry?.backoff ?? base.retry.backoff,
      strategy: own.retry?.strategy ?? base.retry.strategy,
    },
    timeout: own.timeout ?? base.timeout,
    concurrency: own.concurrency ?? base.concurrency,
    overlap: own.overlap ?? base.overlap,
    catchUp: own.catchUp === undefined ? base.catchUp : own.catchUp,
    notify: own.notify ?? base.notify,
  };
}

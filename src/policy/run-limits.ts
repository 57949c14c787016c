import { z } from 'zod';

const PERCENT_PATTERN = /^\d+(\.\d+)?%$/;

/** `"p%"` with 0 < p ≤ 100, still as text; `rule` says what was expected when it is no percentage. */
function percentText(rule: string) {
  return z
    .string()
    .regex(PERCENT_PATTERN, { error: rule, abort: true })
    .refine((text) => {
      const percent = Number(text.slice(0, -1));
      return percent > 0 && percent <= 100;
    }, 'a percentage must be above 0% and at most 100%');
}

const MAX_TARGETS_RULE = 'expected a number of targets such as 20, or a percentage such as "10%"';
export const MaxTargetsSchema = z
  .union([z.int().min(1), percentText(MAX_TARGETS_RULE)], { error: MAX_TARGETS_RULE })
  .transform(
    (value): MaxTargets =>
      typeof value === 'number' ? { count: value } : { percent: Number(value.slice(0, -1)) },
  )
  .meta({ description: 'Refuse a run that would touch more targets than this: a count, or "p%" of all.' });

/** A cap on how many targets one run may touch: a count, or a share of all targets the API lists. */
export type MaxTargets = { readonly count: number } | { readonly percent: number };

/**
 * When a run stops starting targets because too many failed: after `failures` failed targets, or
 * once `percent` of its finished targets failed, judged from `minTargets` finished on.
 */
export type StopAfter =
  | { readonly failures: number }
  | { readonly percent: number; readonly minTargets: number };

/** How many finished targets a failure rate is judged from, unless `minTargets` says. */
export const DEFAULT_STOP_AFTER_MIN_TARGETS = 10;
const FAILURE_RATE_RULE = 'expected a share of failed targets such as "20%"';

export const StopAfterSchema = z
  .strictObject({
    failures: z.int().min(1).optional().meta({ description: 'Stop after this many targets failed.' }),
    failureRate: percentText(FAILURE_RATE_RULE)
      .optional()
      .meta({ description: 'Stop once this share of the finished targets failed, such as "20%".' }),
    minTargets: z.int().min(1).optional().meta({
      description: 'With failureRate: how many targets must have finished before the rate is judged.',
      default: DEFAULT_STOP_AFTER_MIN_TARGETS,
    }),
  })
  .refine((value) => (value.failures === undefined) !== (value.failureRate === undefined), {
    error: 'expected exactly one of failures or failureRate',
  })
  .refine((value) => value.minTargets === undefined || value.failureRate !== undefined, {
    error: 'minTargets goes with failureRate',
  })
  .transform(
    (value): StopAfter =>
      value.failures !== undefined
        ? { failures: value.failures }
        : {
            percent: Number((value.failureRate as string).slice(0, -1)),
            minTargets: value.minTargets ?? DEFAULT_STOP_AFTER_MIN_TARGETS,
          },
  )
  .meta({
    description:
      'Stop starting targets once too many failed: { failures: N } or { failureRate: "20%", minTargets: 10 }. The run ends halted. Default: the action\'s (rollouts and deletions stop after the first failure).',
  });

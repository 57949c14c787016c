import type { SourceLocation } from './errors.js';
import { applySettings, type EffectiveSettings } from './job-settings.js';
import type { JobTarget, PolicyJob } from './load.js';
import type { JobDocument, TargetSelector, WindowDocument } from './schema.js';
import type { PolicySecret } from './secrets.js';
import { parseUptime } from './uptime.js';
import { type PolicyWindow, WINDOW_ACTION } from './windows.js';

/**
 * A window as the engine runs it: a job of kind `window` whose reconciliations the scheduler
 * fires every `every` and at each uptime edge. Its calendars shape the uptime, so they skip no
 * reconciliation; it never overlaps itself.
 */
export function resolveWindow(
  name: string,
  location: SourceLocation,
  document: WindowDocument,
  {
    defaults,
    calendars,
    targets,
    selectors,
    secrets,
  }: {
    defaults: EffectiveSettings;
    calendars: Readonly<Record<string, readonly string[]>>;
    targets: Readonly<Record<string, TargetSelector>>;
    /** Every window's selector, so a workspace under two is refused at run time. */
    selectors: readonly { name: string; selector: TargetSelector }[];
    secrets: readonly PolicySecret[];
  },
): PolicyJob {
  const settings = applySettings(defaults, { ...document, overlap: 'skip', catchUp: undefined });
  const uptime = parseUptime(document.uptime);
  if (!uptime.ok) throw new Error(`window ${name}: ${uptime.message}`);
  const skip = document.skip ?? [];
  const window: PolicyWindow = {
    uptime: uptime.uptime,
    uptimeText: document.uptime,
    timezone: settings.timezone,
    skipDates: new Set(skip.flatMap((calendar) => calendars[calendar] ?? [])),
    every: document.every ?? DEFAULT_EVERY_MS,
    enforce: document.enforce ?? false,
    resume: document.resume ?? 'owned',
    grace: document.grace ?? 0,
    driftPersistsAfter: document.driftPersistsAfter ?? DEFAULT_DRIFT_PERSISTS_AFTER,
    others: selectors.filter((other) => other.name !== name),
  };
  return {
    name,
    kind: 'window',
    description: document.description,
    schedule: { cron: '', timezone: settings.timezone, kind: 'window' },
    action: WINDOW_ACTION,
    params: {},
    target: resolveTarget(document.target, targets),
    skip,
    skipDates: new Set(),
    maxTargets: document.maxTargets,
    stopAfter: document.stopAfter,
    dryRun: document.dryRun ?? false,
    confirm: false,
    suspend: document.suspend ?? false,
    window,
    secrets,
    location,
    ...settings,
  };
}

/** How often a window is reconciled when it does not say. */
export const DEFAULT_EVERY_MS = 5 * 60_000;
/** Three reconciliations: drift seen at one edge and two checks after it is no passing state. */
export const DEFAULT_DRIFT_PERSISTS_AFTER = 3;

export function resolveTarget(
  target: JobDocument['target'],
  targets: Readonly<Record<string, TargetSelector>>,
): JobTarget | undefined {
  if (target === undefined) return undefined;
  if (typeof target !== 'string') return { name: undefined, selector: target };
  const selector = targets[target];
  return selector ? { name: target, selector } : undefined;
}

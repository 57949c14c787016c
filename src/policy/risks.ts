import type { ActionCatalog } from './action-catalog.js';
import { isMap, type RawMap } from './check.js';
import { formatDuration } from './duration.js';
import type { PolicyProblem } from './errors.js';
import { warningAt } from './issues.js';
import type { ValuePath } from './paths.js';
import type { TargetSelector } from './schema.js';
import type { YamlSource } from './yaml/index.js';

/**
 * Warnings about what a valid job would do, read from its resolved settings: a destructive action
 * let loose on every workgroup, and a timeout that cancels the run while its action still waits.
 * See docs/policy.md, "Warnings".
 */

/** What a job is, as these checks read it: a resolved job of the policy. */
export interface RiskyJob {
  readonly name: string;
  readonly kind: 'job' | 'window';
  readonly action: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly target: { readonly name: string | undefined; readonly selector: TargetSelector } | undefined;
  readonly maxTargets: unknown;
  /** Milliseconds. */
  readonly timeout: number;
}

/** Workgroup globs that match every name: a target holding one selects the whole fleet. */
const EVERY_WORKGROUP = new Set(['*', '**']);

export function jobRisks(
  jobs: readonly RiskyJob[],
  registry: ActionCatalog,
  source: YamlSource,
  root: RawMap,
): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const job of jobs) {
    if (job.kind !== 'job') continue;
    const action = registry.get(job.action);
    if (!action) continue;
    const at: ValuePath = ['jobs', job.name];
    const everything = job.target?.selector.workgroups.find((glob) => EVERY_WORKGROUP.has(glob));
    if (action.destructive && everything !== undefined && job.maxTargets === undefined) {
      const named = job.target?.name === undefined ? '' : ` (target "${job.target.name}")`;
      problems.push(
        warningAt(
          source,
          [...at, 'target'],
          `action "${action.name}" is destructive and its target selects every workgroup ("${everything}")${named} without maxTargets: one run may act on the whole fleet; set maxTargets (a count or a percentage) to cap it`,
        ),
      );
    }
    const wait = action.longestWait?.(job.params);
    if (wait && job.timeout <= wait.ms) problems.push(timeoutWarning(source, root, job, wait));
  }
  return problems;
}

function timeoutWarning(
  source: YamlSource,
  root: RawMap,
  job: RiskyJob,
  wait: { ms: number; why: string },
): PolicyProblem {
  const raw = isMap(root.jobs) && isMap(root.jobs[job.name]) ? root.jobs[job.name] : {};
  const defaults = isMap(root.defaults) ? root.defaults : {};
  const own = isMap(raw) && raw.timeout !== undefined;
  const inherited = defaults.timeout !== undefined;
  const whose = own ? '' : inherited ? ' (from defaults)' : ' (the default)';
  const path: ValuePath = own
    ? ['jobs', job.name, 'timeout']
    : isMap(raw) && isMap(raw.with) && raw.with.waitReady !== undefined
      ? ['jobs', job.name, 'with', 'waitReady']
      : ['jobs', job.name];
  const timeout = formatDuration(job.timeout);
  return warningAt(
    source,
    path,
    `timeout ${timeout}${whose} is not longer than the ${formatDuration(wait.ms)} its action may wait (${wait.why}): the run would be cancelled while it waits; set the job's timeout above it`,
    path.length === 2 ? 'key' : 'value',
  );
}

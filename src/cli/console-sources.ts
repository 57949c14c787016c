import { actionRegistry } from '../../jobs/index.js';
import type { SinkCommandAllowlist } from '../engine/index.js';
import type { ConsoleControl, ConsoleRunNow, ConsoleSources } from '../ops/index.js';
import { checkPolicy, formatProblem, type PolicyVariables } from '../policy/index.js';
import { enqueueRuns, manualRunId, queueApprovedRun, runsUnderWay } from '../queue/index.js';
import {
  FindingsLedger,
  RedisFleetListings,
  type RunCancellations,
  WorkspaceHistory,
} from '../store/index.js';
import { systemClock } from '../time/index.js';
import { withSinkCommands } from './policy-io.js';
import type { RedisRuntime } from './runtime.js';

/**
 * What the console reads, on a role's Redis runtime. The policy in force is read with this
 * process's variables; one it lacks is no error (`unsetVariables: 'warning'`): the console shows
 * names and schedules, never a value.
 */
export function consoleSources(runtime: RedisRuntime, variables: PolicyVariables): ConsoleSources {
  const prefix = runtime.prefix;
  return {
    history: runtime.history,
    policies: runtime.policies,
    suspensions: runtime.suspensions,
    state: runtime.state,
    listings: new RedisFleetListings(runtime.redis, { prefix }),
    findings: new FindingsLedger(runtime.redis, { prefix }),
    timeline: new WorkspaceHistory(runtime.redis, { prefix }),
    audit: runtime.audit,
    ...queuedRuns(runtime.queue, runtime.cancellations),
    readPolicy(text, sha) {
      const { policy, problems } = checkPolicy(text, `policy@${sha.slice(0, 12)}`, {
        registry: actionRegistry,
        ...variables,
        unsetVariables: 'warning',
      });
      if (policy) return policy;
      const first = problems[0];
      return `the policy in force cannot be read here${first ? `: ${formatProblem(first)}` : ''}`;
    },
  };
}

/**
 * What the console reads of the queue: one run's entry while the history has no summary of it (its
 * job, how far it is), and every run the queue holds; each with the cancel asked for it.
 */
export function queuedRuns(
  queue: RedisRuntime['queue'],
  cancellations: Pick<RunCancellations, 'get'>,
): Pick<ConsoleSources, 'inProgress' | 'underWay'> {
  const cancellation = async (runId: string) => (await cancellations.get(runId)) ?? null;
  return {
    async inProgress(runId) {
      const entry = await queue.getJob(runId);
      if (!entry) return undefined;
      const state = await entry.getState();
      return {
        runId,
        job: entry.data.job,
        state:
          state === 'active'
            ? 'running'
            : state === 'completed' || state === 'failed'
              ? 'finishing'
              : 'queued',
        cancellation: await cancellation(runId),
      };
    },
    underWay: async (limit) =>
      Promise.all(
        (await runsUnderWay(queue, limit)).map(async (run) => ({
          ...run,
          cancellation: await cancellation(run.runId),
        })),
      ),
  };
}

/**
 * How the console checks a run it is asked to queue: as `nightshift run` checks its file (its
 * `loadPolicy` with `only` and `parameters`), on the policy in force, with this process's variables
 * and sink commands.
 */
export function runNowCheck(
  variables: PolicyVariables,
  sinkCommands: SinkCommandAllowlist,
): ConsoleRunNow['check'] {
  return (text, sha, job, parameters) =>
    withSinkCommands(
      checkPolicy(text, `policy@${sha.slice(0, 12)}`, {
        registry: actionRegistry,
        ...variables,
        only: job,
        parameters: { job, values: parameters },
      }),
      sinkCommands,
    );
}

/**
 * What the console changes, on a role's Redis runtime: the stores src/control writes through. It
 * queues runs only when the runtime's policy store can sign them (every role that serves the
 * console holds a key; a runtime without one offers no run-now).
 */
export function consoleControl(runtime: RedisRuntime, check: ConsoleRunNow['check']): ConsoleControl {
  return {
    holds: runtime.state.holds,
    suspensions: runtime.suspensions,
    cancellations: runtime.cancellations,
    queued: async (runId) => (await runtime.queue.getJob(runId))?.data,
    audit: runtime.audit,
    approvals: runtime.approvals,
    queueApproved: (record) => queueApprovedRun(runtime.queue, record),
    recordEnded: (summary) => runtime.history.record(summary),
    clock: systemClock,
    runNow: runtime.policies.canSign
      ? {
          policies: runtime.policies,
          runId: manualRunId,
          enqueue: (run) => enqueueRuns(runtime.queue, [run]),
          audit: runtime.audit,
          check,
        }
      : undefined,
  };
}

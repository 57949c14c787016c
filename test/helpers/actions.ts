import { actionRegistry, actions } from '../../jobs/index.js';
import { ApiClient } from '../../src/api/index.js';
import { type PolicyEnv, parsePolicy } from '../../src/policy/index.js';
import { executeRun, MemoryCheckpointStore, type RunSummary, recordApiCall } from '../../src/runs/index.js';
import {
  DEFAULT_API_KEY,
  DEFAULT_BEARER_TOKEN,
  type RequestLogEntry,
  type SimulatorHandle,
} from '../../src/sim/index.js';
import { captureLog, type LogLine } from './engine.js';

/** Operations that change nothing; a plan or dry run may call only these. */
export const READ_ONLY_OPERATIONS = new Set([
  'listWorkgroups',
  'listAllowedIps',
  'checkCurrentIp',
  'getCloudProvider',
  'listOrgUsers',
]);

export interface ActionRun {
  summary: RunSummary;
  /** Every log line of the run, parsed (production logger, redaction included). */
  lines: LogLine[];
  /** The simulator's request log entries made by this run. */
  requests: RequestLogEntry[];
}

export interface RunJobOptions {
  dryRun?: boolean;
  env?: PolicyEnv;
  /** Interval of the run's shared poll; short so waits end quickly against a fast simulator. */
  pollIntervalMs?: number;
}

/**
 * Runs one job of a policy against the simulator exactly as `nightshift run --inline` does
 * (same registry, same executeRun, same per-call logging), and returns its summary, its log
 * lines and the requests it made.
 */
export async function runJob(
  sim: SimulatorHandle,
  policyText: string,
  jobName: string,
  options: RunJobOptions = {},
): Promise<ActionRun> {
  const policy = parsePolicy(policyText, 'test.yaml', { registry: actionRegistry, env: options.env ?? {} });
  const job = policy.jobs.find((candidate) => candidate.name === jobName);
  if (!job) throw new Error(`no job ${jobName}`);
  const { log, lines } = captureLog('debug');
  const api = new ApiClient({
    baseUrl: sim.url,
    apiKey: DEFAULT_API_KEY,
    bearerToken: DEFAULT_BEARER_TOKEN,
    onCall: recordApiCall(log),
  });
  const since = sim.requests().at(-1)?.seq ?? 0;
  try {
    const summary = await executeRun(
      {
        api,
        actions,
        checkpoints: new MemoryCheckpointStore(),
        log,
        signal: new AbortController().signal,
        pollIntervalMs: options.pollIntervalMs ?? 50,
      },
      { runId: `${jobName}@test`, job, trigger: 'manual', dryRun: options.dryRun ?? job.dryRun },
    );
    return { summary, lines, requests: sim.requests().filter((entry) => entry.seq > since) };
  } finally {
    await api.close();
  }
}

/** The operations a run called that change something. */
export function mutatingCalls(run: ActionRun): string[] {
  return run.requests
    .map((entry) => entry.operation ?? entry.path)
    .filter((operation) => !READ_ONLY_OPERATIONS.has(operation));
}

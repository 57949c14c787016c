import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { actionRegistry, actions } from '../../jobs/index.js';
import { ApiClient, READ_OPERATIONS } from '../../src/api/index.js';
import {
  type Clock,
  executeRun,
  MemoryCheckpointStore,
  nodeActionIo,
  type RunSummary,
  recordApiCall,
} from '../../src/engine/index.js';
import { type PolicyEnv, parsePolicy } from '../../src/policy/index.js';
import {
  DEFAULT_API_KEY,
  DEFAULT_BEARER_TOKEN,
  type RequestLogEntry,
  type SimState,
  type SimulatorHandle,
  seedState,
  startSimulator,
} from '../../src/sim/index.js';
import { captureLog, type LogLine } from './engine.js';
import { type RefusingProxy, startRefusingProxy } from './refusing-proxy.js';

/** Operations that change nothing; a plan or dry run may call only these. */
export const READ_ONLY_OPERATIONS: ReadonlySet<string> = new Set(READ_OPERATIONS);

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
  /** The bearer token the client sends; `null` configures none. Default: the simulator's. */
  bearerToken?: string | null;
  /** Where the run keeps its checkpoints: one holding records plays an earlier delivery's. Default: empty. */
  checkpoints?: MemoryCheckpointStore;
  /** The run's clock. Default: the system's. */
  clock?: Clock;
  /** How long the client waits for an answer (`NIGHTSHIFT_API_TIMEOUT_MS`). Default: the client's. */
  apiTimeoutMs?: number;
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
    bearerToken: options.bearerToken === null ? undefined : (options.bearerToken ?? DEFAULT_BEARER_TOKEN),
    onCall: recordApiCall(log),
    ...(options.apiTimeoutMs === undefined ? {} : { timeoutMs: options.apiTimeoutMs }),
  });
  const since = sim.requests().at(-1)?.seq ?? 0;
  try {
    const summary = await executeRun(
      {
        api,
        io: nodeActionIo({ environment: process.env }),
        actions,
        checkpoints: options.checkpoints ?? new MemoryCheckpointStore(),
        log,
        signal: new AbortController().signal,
        pollIntervalMs: options.pollIntervalMs ?? 50,
        ...(options.clock ? { clock: options.clock } : {}),
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

/**
 * Fails unless every one of `secrets` is a non-empty string that appears neither in the run's
 * log lines nor in its summary.
 */
export function expectNoSecretLeak(run: ActionRun, secrets: readonly string[]): void {
  const logged = JSON.stringify(run.lines);
  const summary = JSON.stringify(run.summary);
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(0);
    expect(logged).not.toContain(secret);
    expect(summary).not.toContain(secret);
  }
}

/** A seeded fleet (seed 5) of two workgroups, prod-core and dev-alpha, of two workspaces each. */
export function smallFleet(): SimState {
  return seedState({ seed: 5, fleet: { workgroups: 2, workspacesPerWorkgroup: 2 } });
}

/** The workgroup called `name`; throws when there is none. */
export function workgroupNamed(state: SimState, name: string): SimState['workgroups'][number] {
  const workgroup = state.workgroups.find((wg) => wg.name === name);
  if (!workgroup) throw new Error(`no workgroup ${name}`);
  return workgroup;
}

/** The workspaces of the workgroup called `name`. */
export function workspacesIn(state: SimState, name: string): SimState['workspaces'] {
  const { workgroup_id } = workgroupNamed(state, name);
  return state.workspaces.filter((ws) => ws.workgroup_id === workgroup_id);
}

export interface ActionSimOptions {
  /** Put a refusing proxy in front of the simulator, which `run` then goes through. Default `false`. */
  proxy?: boolean;
  /** Duration of the simulator's transitions. Default `50`. */
  transitionMs?: number;
  /**
   * Reset the simulator to `state()` (and forget the proxy's refusals and calls) before each
   * test. Default `true`; `false` is for a file whose tests carry on from one another.
   */
  resetEach?: boolean;
}

/** What a test file's action harness gives its tests. */
export interface ActionSim {
  /** The simulator itself: its live state, faults and request log. */
  readonly sim: SimulatorHandle;
  /** The refusing proxy in front of it; only with `proxy: true`. */
  readonly proxy: RefusingProxy;
  /** {@link runJob} against the simulator, through the proxy when there is one. */
  run(policyText: string, jobName: string, options?: RunJobOptions): Promise<ActionRun>;
}

/**
 * One simulator (and, with `proxy: true`, a refusing proxy in front of it) per test file or
 * describe block, started from `state()` before its first test, reset before each test and
 * closed after the last, as useEngineHarness does for the engine tests.
 */
export function useActionSim(state: () => SimState, options: ActionSimOptions = {}): ActionSim {
  let sim: SimulatorHandle | undefined;
  let proxy: RefusingProxy | undefined;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, transitionMs: options.transitionMs ?? 50, state: state() });
    if (options.proxy) proxy = await startRefusingProxy(sim);
  });
  if (options.resetEach ?? true) {
    beforeEach(() => {
      sim?.reset({ state: state() });
      proxy?.reset();
    });
  }
  afterAll(async () => {
    await proxy?.close();
    await sim?.close();
  });
  const started = (): SimulatorHandle => {
    if (!sim) throw new Error('the simulator starts before the first test');
    return sim;
  };
  return {
    get sim() {
      return started();
    },
    get proxy() {
      if (!proxy) throw new Error('no refusing proxy: pass { proxy: true } to useActionSim');
      return proxy;
    },
    run: (policyText, jobName, runOptions) =>
      runJob(proxy?.sim ?? started(), policyText, jobName, runOptions),
  };
}

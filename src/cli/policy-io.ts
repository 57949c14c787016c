import { actionRegistry } from '../../jobs/index.js';
import {
  type ActionRegistry,
  checkPolicyFile,
  formatProblem,
  type Policy,
  type PolicyEnv,
  type PolicyJob,
} from '../policy/index.js';
import type { Suspension } from '../queue/suspensions.js';
import { EXIT } from './exit.js';

/**
 * What the policy commands touch outside themselves, so tests can fix the clock and capture output.
 * Bad usage goes through commander's own error path (exit 2 via main); an invalid policy is
 * printed in full and only sets the exit code, so every problem is shown.
 */
export interface PolicyCommandDeps {
  readonly registry: ActionRegistry;
  readonly env: PolicyEnv;
  readonly now: () => Date;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly setExitCode: (code: number) => void;
  /**
   * Suspensions kept in Redis (`nightshift suspend`), or undefined when no Redis is configured.
   * Rejects when Redis is configured but cannot be read.
   */
  readonly suspensions: () => Promise<ReadonlyMap<string, Suspension> | undefined>;
}

export function policyCommandDeps(overrides: Partial<PolicyCommandDeps> = {}): PolicyCommandDeps {
  return {
    registry: actionRegistry,
    env: process.env,
    now: () => new Date(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    setExitCode: (code) => {
      process.exitCode = code;
    },
    suspensions: async () => undefined,
    ...overrides,
  };
}

/**
 * Loads a policy. Prints its problems on stderr (`file:line:col: message`, warnings as
 * `file:line:col: warning: message`); on an error sets exit code 2 and returns undefined. Warnings
 * alone do not stop the command.
 */
export async function loadOrReport(file: string, deps: PolicyCommandDeps): Promise<Policy | undefined> {
  const { problems, policy } = await checkPolicyFile(file, {
    registry: deps.registry,
    env: deps.env,
    now: deps.now(),
  });
  if (problems.length > 0) deps.stderr(`${problems.map(formatProblem).join('\n')}\n`);
  if (policy) return policy;
  deps.setExitCode(EXIT.usage);
  return undefined;
}

/** `dev`, `inline(dev-*)`, or `-` for an action that takes no target. */
export function describeTarget(job: PolicyJob): string {
  if (!job.target) return '-';
  return job.target.name ?? `inline(${job.target.selector.workgroups.join(',')})`;
}

/**
 * Exit codes every command follows: 0 success, 1 the job or run failed, 2 bad usage or invalid
 * policy, 3 the run succeeded but reported findings (so an audit can gate a CI pipeline).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, findings: 3 } as const;

/** Thrown by a command for bad usage; printed without a stack and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Thrown by a command when its job or run failed with nothing better to print; exits 1. */
export class RunFailedError extends Error {
  override name = 'RunFailedError';

  constructor(runId: string, reason: string) {
    super(`run ${runId} failed: ${reason}`);
  }
}

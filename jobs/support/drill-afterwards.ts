import { type ActionContext, idempotentStep, STATUS } from '../../src/engine/index.js';
import { type Afterwards, describeError } from './drill-record.js';

/** The pause afterwards still gets this long when the run itself timed out or was cancelled. */
const CLEANUP_TIMEOUT_MS = 30_000;
const PAUSED: readonly string[] = [STATUS.stopping, STATUS.stopped];

/**
 * Pauses the drill workspace (`afterwards: pause`), also after the run timed out or was cancelled.
 * Never throws: a failed pause is returned with its error, to be recorded.
 */
export async function pauseAfterwards(
  ctx: ActionContext,
  { workgroupId, workspaceId }: { workgroupId: string; workspaceId: string },
): Promise<{ afterwards: Afterwards; error?: unknown }> {
  const signal = ctx.signal.aborted ? AbortSignal.timeout(CLEANUP_TIMEOUT_MS) : ctx.signal;
  const status = ctx.fleet.workspace(workgroupId, workspaceId)?.status ?? undefined;
  const alreadyPaused = (now: string) => ({
    afterwards: { requested: 'pause', outcome: 'already-paused', reason: `already ${now}` } as const,
  });
  if (status && PAUSED.includes(status)) return alreadyPaused(status);
  if (status !== STATUS.active) {
    const reason = `workspace is ${status ?? 'missing'}`;
    return { afterwards: { requested: 'pause', outcome: 'not-paused', reason } };
  }
  try {
    const outcome = await idempotentStep({
      attempt: () => ctx.api.pauseWorkspace(workgroupId, workspaceId, { signal }),
      // a refusal may only mean the listing was stale and the workspace is pausing already
      isDone: async () => {
        if (ctx.signal.aborted) return undefined;
        const now = await ctx.fleet.refresh().then(
          () => ctx.fleet.workspace(workgroupId, workspaceId)?.status ?? undefined,
          () => undefined,
        );
        return now && PAUSED.includes(now) ? now : undefined;
      },
    });
    if (outcome.already) return alreadyPaused(outcome.found);
    const { requestId } = outcome.result;
    return { afterwards: { requested: 'pause', outcome: 'paused', ...(requestId ? { requestId } : {}) } };
  } catch (error) {
    return { afterwards: { requested: 'pause', outcome: 'not-paused', reason: describeError(error) }, error };
  }
}

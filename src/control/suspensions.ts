import type { Suspensions } from '../store/index.js';
import { type AuditLog, type Origin, recordChange } from './origin.js';

export interface SuspensionPorts {
  readonly suspensions: Pick<Suspensions, 'suspend' | 'unsuspend'>;
  readonly audit: AuditLog;
}

/**
 * Suspends a job until `until` (ISO; none: until someone unsuspends it), or changes the reason or
 * end of its suspension; true if anything changed, and then recorded.
 */
export async function suspendJob(
  ports: SuspensionPorts,
  job: string,
  { reason, until }: { reason?: string | undefined; until?: string | undefined },
  origin: Origin,
): Promise<boolean> {
  const changed = await ports.suspensions.suspend(job, { reason, by: origin.who, until: until ?? null });
  if (changed)
    await recordChange(ports.audit, origin, 'suspend', job, {
      why: reason,
      details: until ? { until } : {},
    });
  return changed;
}

/** Ends a job's suspension; true if it was suspended, and then recorded. */
export async function unsuspendJob(
  ports: SuspensionPorts,
  job: string,
  { reason }: { reason?: string | undefined },
  origin: Origin,
): Promise<boolean> {
  const changed = await ports.suspensions.unsuspend(job);
  if (changed) await recordChange(ports.audit, origin, 'unsuspend', job, { why: reason });
  return changed;
}

import { z } from 'zod';
import { NightshiftError } from '../errors/index.js';

/** An operator's request to cancel a run (`nightshift cancel`): who, why and when. */
export const CancellationSchema = z.object({
  by: z.string(),
  reason: z.string().optional(),
  /** When it was asked for (ISO 8601). */
  at: z.string(),
});
export type Cancellation = z.infer<typeof CancellationSchema>;

/** `cancelled by <who>` and `: <why>` when a reason was given: what the run's summary says. */
export function describeCancellation({ by, reason }: Cancellation): string {
  return `cancelled by ${by}${reason ? `: ${reason}` : ''}`;
}

/**
 * A run an operator cancelled: it starts no new target, the targets under way finish their step,
 * and the run ends `cancelled`. What it recorded so far (checkpoints, ownership) stays true.
 */
export class RunCancelledError extends NightshiftError {
  override name = 'RunCancelledError';
  readonly code = 'NS_RUN_CANCELLED';
  readonly cancellation: Cancellation;

  constructor(cancellation: Cancellation) {
    super(describeCancellation(cancellation));
    this.cancellation = cancellation;
  }
}

import type { Hold } from '../engine/index.js';
import type { Holds } from '../store/index.js';
import { type AuditLog, type Origin, recordChange } from './origin.js';

export interface HoldPorts {
  readonly holds: Pick<Holds, 'place' | 'release'>;
  readonly audit: AuditLog;
}

/** Places a hold and records who placed it. */
export async function placeHold(ports: HoldPorts, hold: Hold, origin: Origin): Promise<void> {
  await ports.holds.place(hold);
  await recordChange(ports.audit, origin, 'hold', hold.pattern, {
    why: hold.reason,
    details: { state: hold.state, until: hold.until },
  });
}

/** Ends the hold on exactly `pattern`; the hold it ended (recorded), or undefined when there was none. */
export async function releaseHold(
  ports: HoldPorts,
  pattern: string,
  origin: Origin,
  now: Date,
): Promise<Hold | undefined> {
  const released = await ports.holds.release(pattern, origin.who, now);
  if (released)
    await recordChange(ports.audit, origin, 'release', pattern, {
      details: { state: released.state, until: released.until },
    });
  return released;
}

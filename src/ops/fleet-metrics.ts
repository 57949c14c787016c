import type { RedisFleetState } from '../store/index.js';

/** What the window, hold and savings metrics report, as read from Redis at one scrape. */
export interface FleetSnapshot {
  /** Drifting workspaces by window, as each window's last reconciliation found them. */
  drift: [string, number][];
  /** Stranded workspaces by window (paused by nightshift, owned by nobody), as each window's last reconciliation found them. */
  stranded: [string, number][];
  holds: { active: number; stopped: number };
  /** Owned paused hours, all time: closed stretches plus the pauses owned now. */
  hours: number;
  /** Their estimated cost, by currency. */
  cost: Record<string, number>;
}

/** Where the fleet metrics come from: one read of Redis per scrape. */
export interface FleetSnapshotSource {
  snapshot(now: Date): Promise<FleetSnapshot>;
}

const HOUR_MS = 3_600_000;

/** The fleet metrics' source over the ownership ledger, holds and windows' state in Redis. */
export function fleetSnapshots(state: RedisFleetState): FleetSnapshotSource {
  return {
    async snapshot(now) {
      const [windows, held, closed, owned] = await Promise.all([
        state.windows.all(),
        state.holds.active(now, { readOnly: true }),
        state.ledger.closedTotals(),
        state.ledger.all(),
      ]);
      let hours = closed.hours;
      const cost = { ...closed.cost };
      for (const record of owned.values()) {
        if (record.state !== 'confirmed' || !record.pausedAt) continue;
        const open = Math.max(0, now.getTime() - Date.parse(record.pausedAt)) / HOUR_MS;
        hours += open;
        if (record.currency && record.pricePerHour !== undefined)
          cost[record.currency] = (cost[record.currency] ?? 0) + open * record.pricePerHour;
      }
      return {
        drift: [...windows].map(([window, windowState]) => [window, windowState.drift ?? 0]),
        stranded: [...windows].map(([window, windowState]) => [window, windowState.stranded ?? 0]),
        holds: {
          active: held.filter((hold) => hold.state === 'active').length,
          stopped: held.filter((hold) => hold.state === 'stopped').length,
        },
        hours,
        cost,
      };
    },
  };
}

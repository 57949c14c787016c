import { Counter, Gauge, type Registry } from 'prom-client';
import { type Logger, silentLogger } from '../log/logger.js';
import type { RedisFleetState } from '../queue/fleet-state.js';

export interface FleetMetricsOptions {
  /** How long a scrape waits for Redis before leaving these metrics without values. Default 2000 ms. */
  timeoutMs?: number;
  log?: Logger;
}

const HOUR_MS = 3_600_000;

/**
 * Metrics of what nightshift keeps about the fleet, read from Redis at each scrape so every
 * process reports the same figures and a restart loses none: drift per window (as its last
 * reconciliation found it), holds in force, and the hours nightshift kept workspaces paused with
 * their estimated cost (closed stretches plus the pauses it owns now). Every process with an ops
 * server reports them; aggregate with `max`, not `sum`.
 */
export function registerFleetMetrics(
  registry: Registry,
  state: RedisFleetState,
  options: FleetMetricsOptions = {},
): void {
  const log = options.log ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? 2_000;
  let failing = false;
  // a scrape that cannot read Redis reports the last figures read: a counter must never drop
  let last: Snapshot | undefined;
  /** One Redis read per scrape, shared by the four metrics, bounded by the timeout. */
  let reading: Promise<Snapshot | undefined> | undefined;
  const snapshot = () => {
    reading ??= read(state, timeoutMs)
      .then((value) => {
        if (failing) log.info('fleet metrics readable again');
        failing = false;
        last = value;
        return value;
      })
      .catch((error: unknown) => {
        const fields = { err: { message: (error as Error).message }, metrics: 'fleet' };
        if (failing) log.debug(fields, 'fleet metrics not read: the last figures read are reported');
        else log.warn(fields, 'fleet metrics not read: the last figures read are reported');
        failing = true;
        return last;
      })
      .finally(() => {
        // the next scrape reads again
        setImmediate(() => {
          reading = undefined;
        });
      });
    return reading;
  };

  const drift: Gauge<'window'> = new Gauge({
    name: 'nightshift_window_drift_workspaces',
    help: "Workspaces differing from their window's desired state at its last reconciliation (held ones not counted), by window.",
    labelNames: ['window'],
    registers: [registry],
    collect: async () => {
      drift.reset();
      const read = await snapshot();
      for (const [window, count] of read?.drift ?? []) drift.set({ window }, count);
    },
  });
  const holds: Gauge<'state'> = new Gauge({
    name: 'nightshift_holds',
    help: 'Holds in force (nightshift hold), by held state.',
    labelNames: ['state'],
    registers: [registry],
    collect: async () => {
      holds.reset();
      const read = await snapshot();
      if (!read) return;
      for (const state of ['active', 'stopped'] as const) holds.set({ state }, read.holds[state]);
    },
  });
  const hours: Counter = new Counter({
    name: 'nightshift_paused_hours_total',
    help: 'Hours workspaces spent paused by nightshift (owned pauses only), all time: what nightshift savings counts.',
    registers: [registry],
    collect: async () => {
      const read = await snapshot();
      hours.reset();
      if (read) hours.inc(read.hours);
    },
  });
  const cost: Counter<'currency'> = new Counter({
    name: 'nightshift_estimated_cost_avoided_total',
    help: 'Estimated cost of those hours, from the price table of the policy in force when each pause was made, by currency.',
    labelNames: ['currency'],
    registers: [registry],
    collect: async () => {
      const read = await snapshot();
      cost.reset();
      for (const [currency, value] of Object.entries(read?.cost ?? {})) cost.inc({ currency }, value);
    },
  });
}

interface Snapshot {
  drift: [string, number][];
  holds: { active: number; stopped: number };
  hours: number;
  cost: Record<string, number>;
}

async function read(state: RedisFleetState, timeoutMs: number): Promise<Snapshot> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const now = new Date();
    const [windows, held, closed, owned] = await Promise.race([
      Promise.all([
        state.windows.all(),
        state.holds.active(now),
        state.ledger.closedTotals(),
        state.ledger.all(),
      ]),
      timeout,
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
      holds: {
        active: held.filter((hold) => hold.state === 'active').length,
        stopped: held.filter((hold) => hold.state === 'stopped').length,
      },
      hours,
      cost,
    };
  } finally {
    clearTimeout(timer);
  }
}

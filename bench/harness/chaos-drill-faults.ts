import { setTimeout as sleep } from 'node:timers/promises';
import type { Prng } from '../../src/sim/random.js';
import type { KillRecord, ResolvedChaosOptions, RestartRecord } from './chaos-drill.js';
import type { ChaosStage } from './chaos-drill-stage.js';

/**
 * The chaos of the chaos drill: worker SIGKILLs every `killEveryMs` or so, a Redis restart and a
 * scheduler SIGKILL at set fractions of the chaos, each killed process started again
 * `restartAfterMs` later, and the simulator's faults, switched off when the chaos ends.
 */

interface ChaosEvent {
  /** Milliseconds since the first tick. */
  at: number;
  kind: 'kill' | 'redis' | 'scheduler';
}

/** What the chaos did, and what each kill and restart cost so far. */
export interface ChaosRecords {
  kills: KillRecord[];
  restarts: RestartRecord[];
}

export interface ChaosContext {
  options: ResolvedChaosOptions;
  /** Draws the kill schedule, then the victims. */
  rng: Prng;
  stage: ChaosStage;
  /** Epoch ms of the first tick: the events' zero. */
  firstTick: number;
  progress: (line: string) => void;
}

/** Starts a killed process's replacement; it is awaited once the chaos is over. */
type Replace = (restart: () => Promise<void>) => void;

/** The events in time order; the kill gaps are drawn from `rng` (±25 % around `killEveryMs`). */
function chaosSchedule(options: ResolvedChaosOptions, rng: Prng): ChaosEvent[] {
  const events: ChaosEvent[] = [];
  if (options.redisRestartAt !== null)
    events.push({ at: options.redisRestartAt * options.chaosMs, kind: 'redis' });
  if (options.schedulerRestartAt !== null)
    events.push({ at: options.schedulerRestartAt * options.chaosMs, kind: 'scheduler' });
  // kills keep 3 s away from the other events, so each recovery is measured on its own
  for (let at = options.killEveryMs * (0.75 + rng.next() * 0.5); at < options.chaosMs; ) {
    const clash = events.find((e) => e.kind !== 'kill' && Math.abs(e.at - at) < 3_000);
    if (clash) at = clash.at + 3_000;
    else {
      events.push({ at, kind: 'kill' });
      at += options.killEveryMs * (0.75 + rng.next() * 0.5);
    }
  }
  events.sort((a, b) => a.at - b.at);
  return events;
}

/** Runs the chaos from the first tick to `chaosMs` after it, then waits for every replacement's start. */
export async function runChaos(context: ChaosContext): Promise<ChaosRecords> {
  const { options, firstTick, progress } = context;
  const events = chaosSchedule(options, context.rng);
  await sleep(Math.max(0, firstTick - Date.now()));
  progress(
    `chaos for ${options.chaosMs / 1000} s: ${events.filter((e) => e.kind === 'kill').length} kills, ${events.length - events.filter((e) => e.kind === 'kill').length} restarts`,
  );
  const records: ChaosRecords = { kills: [], restarts: [] };
  const replacements: Promise<void>[] = [];
  // a replacement that never starts fails the drill where they are awaited, after the chaos,
  // inside the drill's try: not as an unhandled rejection that ends the drill before its finally
  // stops what it started
  const replace: Replace = (restart) => {
    const replacement = restart();
    replacement.catch(() => {});
    replacements.push(replacement);
  };

  for (const event of events) {
    await sleep(Math.max(0, firstTick + event.at - Date.now()));
    if (event.kind === 'kill') await killWorker(context, records, replace);
    else if (event.kind === 'redis') await restartRedis(context, records);
    else await killScheduler(context, records, replace);
  }
  await sleep(Math.max(0, firstTick + options.chaosMs - Date.now()));
  // The quiet end waits for a moment with no run going, and under 500s and hangs a resume can
  // outlast a tick, and each tick's run then overlaps the next: the API's faults end with the
  // chaos, while its throttle, a property of the API, stays.
  context.stage.sim.setFaults({
    ...options.faults,
    seed: options.seed,
    errorRate: 0,
    dropRate: 0,
    hangRate: 0,
  });
  await Promise.all(replacements);
  const chaosEnd = Date.now();
  progress(
    `${((chaosEnd - firstTick) / 1000).toFixed(1)} s: chaos over (the API's faults off); waiting for the runs of past ticks`,
  );
  return records;
}

/** SIGKILLs a worker (a busy one if `victims: busy` and there is one) and starts its slot again. */
async function killWorker(
  { options, rng, stage, firstTick, progress }: ChaosContext,
  { kills }: ChaosRecords,
  replace: Replace,
): Promise<void> {
  const { processes } = stage;
  // a replacement still starting (slow on a loaded machine) is not killed: its start is awaited
  const candidates = processes.alive('worker').filter((p) => p.readyAt !== undefined);
  if (candidates.length === 0) return;
  const busy = candidates.filter((p) => p.active.size > 0);
  const victim = rng.pick(options.victims === 'busy' && busy.length > 0 ? busy : candidates);
  const runs = await processes.stop(victim, 'SIGKILL');
  const killedAt = victim.killedAt as number;
  const record: KillRecord = {
    atMs: killedAt - firstTick,
    instance: victim.instance,
    runs,
    recoveryMs: undefined,
    unrecovered: [],
    replacementReadyMs: undefined,
  };
  kills.push(record);
  progress(
    `${((killedAt - firstTick) / 1000).toFixed(1)} s: SIGKILL ${victim.instance}${runs.length ? ` executing ${runs.join(', ')}` : ' (idle)'}`,
  );
  replace(async () => {
    await sleep(options.restartAfterMs);
    const next = processes.start('worker', victim.slot);
    await processes.ready(next, 'worker started');
    record.replacementReadyMs = (next.readyAt as number) - killedAt;
  });
}

/** Stops Redis (SIGTERM) for `redisDownMs` and starts it again on the same port and data. */
async function restartRedis(
  { options, stage, firstTick, progress }: ChaosContext,
  { restarts }: ChaosRecords,
): Promise<void> {
  const at = Date.now();
  const inFlight = stage.processes.alive('worker').flatMap((p) => [...p.active]);
  await stage.server.halt();
  await sleep(options.redisDownMs);
  await stage.server.restart();
  const downMs = Date.now() - at;
  restarts.push({ what: 'redis', atMs: at - firstTick, downMs, detail: inFlight.join(', ') });
  progress(
    `${((at - firstTick) / 1000).toFixed(1)} s: Redis stopped and started again (down ${downMs} ms)${inFlight.length ? ` during ${inFlight.join(', ')}` : ''}`,
  );
}

/** SIGKILLs a scheduler and starts its slot again. */
async function killScheduler(
  { options, rng, stage, firstTick, progress }: ChaosContext,
  { restarts }: ChaosRecords,
  replace: Replace,
): Promise<void> {
  const { processes } = stage;
  const victim = rng.pick(processes.alive('scheduler'));
  await processes.stop(victim, 'SIGKILL');
  const at = victim.killedAt as number;
  const record: RestartRecord = {
    what: 'scheduler',
    atMs: at - firstTick,
    downMs: 0,
    detail: victim.instance,
  };
  restarts.push(record);
  progress(`${((at - firstTick) / 1000).toFixed(1)} s: SIGKILL ${victim.instance}`);
  replace(async () => {
    await sleep(options.restartAfterMs);
    const next = processes.start('scheduler', victim.slot);
    await processes.ready(next, 'scheduler started');
    record.downMs = (next.readyAt as number) - at;
  });
}

import { createHash } from 'node:crypto';
import type { RunSummary } from '../../src/engine/index.js';
import type { RunJobData } from '../../src/queue/index.js';
import type { SchedulerPorts } from '../../src/scheduler/scheduler.js';
import type { Suspension } from '../../src/store/index.js';

/** What the ports answer while Redis is out of reach. */
export class RedisDownError extends Error {
  constructor() {
    super('Connection is closed.');
  }
}

/**
 * The scheduler's ports in memory, with Redis's semantics where the scheduler relies on them: a run
 * id is enqueued once however often it is handed over (BullMQ's job id), and a job's last tick only
 * ever moves forward. Every call fails while `down` is set, as with Redis out of reach.
 */
export class MemorySchedulerPorts implements SchedulerPorts {
  readonly ticks = new Map<string, number>();
  /** The runs in the queue, by run id, as first enqueued. */
  readonly queued = new Map<string, RunJobData>();
  /** Every run handed over, duplicates included. */
  readonly handedOver: RunJobData[] = [];
  readonly recorded: RunSummary[] = [];
  readonly suspended = new Map<string, Suspension>();
  readonly windowsKept: string[][] = [];
  down = false;

  readonly lastTicks: SchedulerPorts['lastTicks'] = {
    get: async (jobs) => {
      this.#reach();
      return jobs.map((job) => this.ticks.get(job));
    },
    advance: async (ticks) => {
      this.#reach();
      for (const [job, at] of ticks) {
        if (at.getTime() > (this.ticks.get(job) ?? Number.NEGATIVE_INFINITY))
          this.ticks.set(job, at.getTime());
      }
    },
  };

  readonly windowStates: SchedulerPorts['windowStates'] = {
    retain: async (windows) => {
      this.#reach();
      this.windowsKept.push([...windows]);
    },
  };

  readonly policies: SchedulerPorts['policies'] = {
    put: async (text) => {
      this.#reach();
      return createHash('sha256').update(text).digest('hex');
    },
    setCurrent: async () => this.#reach(),
    keep: async () => this.#reach(),
  };

  readonly history: SchedulerPorts['history'] = {
    record: async (summary) => {
      this.#reach();
      this.recorded.push(summary);
    },
  };

  readonly suspensions: SchedulerPorts['suspensions'] = {
    all: async () => {
      this.#reach();
      return new Map(this.suspended);
    },
  };

  readonly enqueue = async (runs: readonly RunJobData[]): Promise<void> => {
    this.#reach();
    for (const run of runs) {
      this.handedOver.push(run);
      if (!this.queued.has(run.runId)) this.queued.set(run.runId, run);
    }
  };

  /** The ports, as a scheduler takes them. */
  get ports(): SchedulerPorts {
    const { lastTicks, windowStates, policies, history, suspensions, enqueue } = this;
    return { lastTicks, windowStates, policies, history, suspensions, enqueue };
  }

  /** The queued runs as `job@ISO instant (trigger)`, sorted. */
  runs(): string[] {
    return [...this.queued.values()].map((run) => `${run.job}@${run.scheduledAt} (${run.trigger})`).sort();
  }

  #reach(): void {
    if (this.down) throw new RedisDownError();
  }
}

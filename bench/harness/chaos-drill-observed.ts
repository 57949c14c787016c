import type { ChildProcess } from 'node:child_process';

/**
 * What the chaos drill (bench/harness/chaos-drill.ts) learns from its processes' logs: which
 * executions of which runs each process started and ended, the API calls they made, and the
 * processes' starts, reconnections and error lines.
 */

/** A log line of a nightshift process, as the drill reads it (pino JSON). */
export interface LogLine {
  level: number;
  time: number;
  msg: string;
  runId?: string;
  outcome?: string;
  jobs?: { job: string; next?: string }[];
  /** The part of a split run (`run started`, `run part finished`). */
  part?: number;
  /** How many targets a run split into parts (`run split into parts`). */
  targets?: number;
  counts?: { total?: number };
  /** The execution a line of a run comes from (`run started`, `api call`). */
  execution?: string;
  /** How long an API call took (`api call`, `api call failed`): it was sent that long before its line. */
  durationMs?: number;
}

/** An execution whose lease ran out logs this once it has stopped, its calls unwound. */
const LEASE_STOPPED =
  'run stopped: its lease ran out unconfirmed; the next delivery resumes it from its checkpoints';

/** Lines the drill reads; the others only go to the process's log file. */
export const READ = new Set([
  'worker started',
  'scheduler started',
  'run started',
  'run finished',
  'run split into parts',
  'run part finished',
  LEASE_STOPPED,
  'run handed back to the queue at shutdown',
  'run part handed back to the queue at shutdown',
  'target done',
  'api call',
  'api call failed',
  'Redis connection restored',
]);

export interface Proc {
  role: 'worker' | 'scheduler';
  slot: number;
  instance: string;
  child: ChildProcess;
  startedAt: number;
  readyAt?: number;
  /** Set when the drill stops or kills it; an exit without it is unexpected. */
  stopping?: NodeJS.Signals;
  killedAt?: number;
  exited: Promise<void>;
  exitedAt?: number;
  /** Runs it has logged `run started` for and not `run finished`. */
  active: Set<string>;
}

interface Execution {
  /** The run, or `<runId>#<part>` for a part of a split run. */
  runId: string;
  instance: string;
  startedAt: number;
  endedAt: number | undefined;
  /** `handed back`: it stopped and gave the run back to the queue, for the next execution to resume. */
  end: 'finished' | 'handed back' | 'killed' | 'stopped' | undefined;
  /** The execution's lease token (its lines' `execution`): a part the run works itself shares the run's. */
  token: string | undefined;
}

/** An API call a run made, from its log line. */
export interface Call {
  /** The run, or `<runId>#<part>` for a part of a split run. */
  unit: string;
  runId: string;
  execution: string;
  sentAt: number;
  answeredAt: number;
}

/** Everything the drill learns from the processes' logs. */
export class Observed {
  readonly executions: Execution[] = [];
  readonly calls: Call[] = [];
  readonly starts = new Map<string, Execution[]>();
  /** First `target done` per run after a given time is what recovery needs: times per run. */
  readonly targetDone = new Map<string, number[]>();
  readonly restored: { instance: string; at: number }[] = [];
  readonly errors = new Map<string, number>();
  readonly schedulerStarts: { instance: string; at: number; jobs: { job: string; next?: string }[] }[] = [];
  /** Runs split into parts, with how many targets each split. */
  readonly #splitTargets = new Map<string, number>();

  line(proc: Proc, line: LogLine): void {
    if (line.level >= 50) this.errors.set(line.msg, (this.errors.get(line.msg) ?? 0) + 1);
    switch (line.msg) {
      case 'worker started':
        proc.readyAt ??= line.time;
        break;
      case 'scheduler started':
        proc.readyAt ??= line.time;
        this.schedulerStarts.push({ instance: proc.instance, at: line.time, jobs: line.jobs ?? [] });
        break;
      case 'run started': {
        if (!line.runId) break;
        // a part of a split run is executed on its own: `<runId>#<part>`
        const run = line.part === undefined ? line.runId : `${line.runId}#${line.part}`;
        proc.active.add(run);
        const execution: Execution = {
          runId: run,
          instance: proc.instance,
          startedAt: line.time,
          endedAt: undefined,
          end: undefined,
          token: line.execution,
        };
        this.executions.push(execution);
        const list = this.starts.get(run) ?? [];
        list.push(execution);
        this.starts.set(run, list);
        break;
      }
      case 'run split into parts':
        if (line.runId && line.targets !== undefined) this.#splitTargets.set(line.runId, line.targets);
        break;
      case 'run part finished':
        if (line.runId && line.part !== undefined)
          this.#finished(proc, `${line.runId}#${line.part}`, line.time);
        break;
      case LEASE_STOPPED:
      case 'run part handed back to the queue at shutdown':
        if (!line.runId) break;
        if (line.part === undefined) this.#stoppedWithParts(proc, line.runId, line.time);
        else this.#finished(proc, `${line.runId}#${line.part}`, line.time, 'handed back');
        break;
      case 'run handed back to the queue at shutdown':
        if (line.runId) this.#finished(proc, line.runId, line.time, 'handed back');
        break;
      case 'run finished': {
        if (!line.runId) break;
        // a part logs `run finished` too, without its index (its `run part finished` follows); the
        // run itself is the one whose count is all the targets it split
        const split = this.#splitTargets.get(line.runId);
        if (split === undefined || line.counts?.total === split) this.#finished(proc, line.runId, line.time);
        break;
      }
      case 'target done': {
        if (!line.runId) break;
        const list = this.targetDone.get(line.runId) ?? [];
        list.push(line.time);
        this.targetDone.set(line.runId, list);
        break;
      }
      case 'api call':
      case 'api call failed':
        if (line.runId && line.execution)
          this.calls.push({
            unit: line.part === undefined ? line.runId : `${line.runId}#${line.part}`,
            runId: line.runId,
            execution: line.execution,
            sentAt: line.time - (line.durationMs ?? 0),
            answeredAt: line.time,
          });
        break;
      case 'Redis connection restored':
        this.restored.push({ instance: proc.instance, at: line.time });
        break;
    }
  }

  /**
   * A run's execution handed back: the parts it was working itself (under its lease, so with its
   * token) stopped with it, without a line of their own.
   */
  #stoppedWithParts(proc: Proc, runId: string, at: number): void {
    const open = this.starts.get(runId)?.find((e) => e.instance === proc.instance && !e.end);
    if (open?.token)
      for (const execution of this.executions)
        if (
          execution.instance === proc.instance &&
          !execution.end &&
          execution.token === open.token &&
          execution.runId.startsWith(`${runId}#`)
        )
          this.#finished(proc, execution.runId, at, 'handed back');
    this.#finished(proc, runId, at, 'handed back');
  }

  #finished(proc: Proc, run: string, at: number, end: Execution['end'] = 'finished'): void {
    proc.active.delete(run);
    const open = this.starts.get(run)?.find((e) => e.instance === proc.instance && !e.end);
    if (open) Object.assign(open, { endedAt: at, end });
  }

  /** Closes the executions of a process that died or was stopped; returns their runs. */
  ended(proc: Proc, at: number, end: 'killed' | 'stopped'): string[] {
    const runs: string[] = [];
    for (const execution of this.executions) {
      if (execution.instance !== proc.instance || execution.end) continue;
      Object.assign(execution, { endedAt: at, end });
      runs.push(execution.runId);
    }
    proc.active.clear();
    return runs;
  }
}

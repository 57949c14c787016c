import type { LogLine } from './nightshift-process.js';

/**
 * What the edge drill learns from its processes' logs (pino JSON): each execution of a run (a
 * `run started` line, up to the same process's `run finished` or its end), each API call with the
 * run it was made for, why ownership ended, and every warning or error by message.
 */

/** One execution of a run (or of one part of a split run) by one process. */
export interface Execution {
  runId: string;
  /** The part of a split run it executed; undefined for a run as a whole. */
  part: number | undefined;
  process: string;
  /** The execution's token (a part the run works itself has the run's). */
  execution: string | undefined;
  startedAt: number;
  /** Its `run finished` line, or when its process ended; undefined while it runs. */
  endedAt: number | undefined;
  end: 'finished' | 'process ended' | undefined;
}

/** An API call a process logged (`api call`, `api call failed`) for a run. */
export interface LoggedCall {
  process: string;
  runId: string;
  operation: string;
  status: number | undefined;
  /** When it was sent: its line's time less its duration. */
  sentAt: number;
  answeredAt: number;
}

/** Two executions of one run alive at the same time. */
export interface ExecutionOverlap {
  run: string;
  first: Execution;
  second: Execution;
  /** How long both were alive (from `run started` to `run finished` or the process's end). */
  aliveMs: number;
  /**
   * How long both made API calls (first call sent to last answered, each) when they ran in two
   * processes; undefined when that cannot be told from the logs: one process ran both, or the run
   * was split into parts (a call line names the run, not the part nor the execution).
   */
  callsMs: number | undefined;
  /** Calls each made while the other was making calls. */
  callsDuring: [number, number] | undefined;
}

/**
 * What a warning line is counted under: its message, with the operation and status of a failed API
 * call, or the error's own words (ids left out) for anything else that carries an error.
 */
function warningKey(line: LogLine): string {
  if (typeof line.operation === 'string')
    return `${line.msg}: ${line.operation} → ${line.status ?? 'no answer'}`;
  const error = line.err as { message?: string } | undefined;
  const detail = error?.message
    ?.replace(/job \S+?\.?(?= |$)/g, 'job …')
    .replace(/\b(wg|ws|bk|db|cp)-[0-9a-z]+/g, '…')
    .slice(0, 80);
  return detail && !line.msg.includes(detail) ? `${line.msg}: ${detail}` : line.msg;
}

export class RunLogs {
  readonly executions: Execution[] = [];
  readonly calls: LoggedCall[] = [];
  /** Lines at warn level or above, by message. */
  readonly warnings = new Map<string, number>();
  /** `ownership ended` lines, by reason (`resumed`, `seen-active`, `not-paused`). */
  readonly ownershipEnded = new Map<string, number>();
  /** When each process logged `worker started` or `scheduler started`. */
  readonly ready = new Map<string, number>();
  /** The next tick of each job, as each scheduler announced it when it started. */
  readonly announced: { process: string; job: string; next: number | undefined }[] = [];
  /** Runs split into parts, with how many targets each split. */
  readonly #splitTargets = new Map<string, number>();

  /** The reader of one process's lines. */
  reader(process: string): (line: LogLine) => void {
    return (line) => this.#line(process, line);
  }

  #line(process: string, line: LogLine): void {
    if (line.level >= 40) {
      const key = warningKey(line);
      this.warnings.set(key, (this.warnings.get(key) ?? 0) + 1);
    }
    const runId = typeof line.runId === 'string' ? line.runId : undefined;
    switch (line.msg) {
      case 'worker started':
        if (!this.ready.has(process)) this.ready.set(process, line.time);
        break;
      case 'scheduler started': {
        if (!this.ready.has(process)) this.ready.set(process, line.time);
        const jobs = (line.jobs ?? []) as { job: string; next?: string }[];
        for (const { job, next } of jobs)
          this.announced.push({ process, job, next: next ? Date.parse(next) : undefined });
        break;
      }
      case 'run started':
        if (runId)
          this.executions.push({
            runId,
            part: typeof line.part === 'number' ? line.part : undefined,
            process,
            execution: typeof line.execution === 'string' ? line.execution : undefined,
            startedAt: line.time,
            endedAt: undefined,
            end: undefined,
          });
        break;
      case 'run split into parts':
        if (runId && typeof line.targets === 'number') this.#splitTargets.set(runId, line.targets);
        break;
      case 'run part finished':
      case 'run part handed back to the queue at shutdown':
      // an execution whose lease ran out logs this once it has stopped, its calls unwound
      case 'run stopped: its lease ran out unconfirmed; the next delivery resumes it from its checkpoints':
        this.#close(process, runId, typeof line.part === 'number' ? line.part : undefined, line.time);
        break;
      case 'run handed back to the queue at shutdown':
        this.#close(process, runId, undefined, line.time);
        break;
      case 'run finished': {
        // a part logs `run finished` too, without its index (its `run part finished` line follows);
        // the run itself is the one whose count is all the targets it split
        const split = runId === undefined ? undefined : this.#splitTargets.get(runId);
        const counts = line.counts as { total?: unknown } | undefined;
        if (split === undefined || counts?.total === split) this.#close(process, runId, undefined, line.time);
        break;
      }
      case 'api call':
      case 'api call failed':
        if (runId && typeof line.operation === 'string') {
          const durationMs = typeof line.durationMs === 'number' ? line.durationMs : 0;
          this.calls.push({
            process,
            runId,
            operation: line.operation,
            status: typeof line.status === 'number' ? line.status : undefined,
            sentAt: line.time - durationMs,
            answeredAt: line.time,
          });
        }
        break;
      case 'ownership ended': {
        const reason = String(line.reason ?? 'unknown');
        this.ownershipEnded.set(reason, (this.ownershipEnded.get(reason) ?? 0) + 1);
        break;
      }
    }
  }

  #close(process: string, runId: string | undefined, part: number | undefined, at: number): void {
    const open = this.executions.findLast(
      (e) => e.process === process && e.runId === runId && e.part === part && !e.end,
    );
    if (!open) return;
    Object.assign(open, { endedAt: at, end: 'finished' });
    // a run that stops stops the parts it was working itself (they log no end of their own)
    if (part === undefined && open.execution !== undefined)
      for (const e of this.executions)
        if (e.process === process && e.execution === open.execution && e.part !== undefined && !e.end)
          Object.assign(e, { endedAt: at, end: 'finished' });
  }

  /** Closes the executions of a process that ended. */
  processEnded(process: string, at: number): void {
    for (const execution of this.executions)
      if (execution.process === process && !execution.end)
        Object.assign(execution, { endedAt: at, end: 'process ended' });
  }

  /** Executions of `runId` not yet ended. */
  running(runId: string): Execution[] {
    return this.executions.filter((e) => e.runId === runId && !e.end);
  }

  /** Executions by run (`<runId>` or `<runId>#<part>`), in the order they started. */
  byRun(): Map<string, Execution[]> {
    const runs = new Map<string, Execution[]>();
    for (const execution of this.executions) {
      const run = execution.part === undefined ? execution.runId : `${execution.runId}#${execution.part}`;
      runs.set(run, [...(runs.get(run) ?? []), execution]);
    }
    return runs;
  }

  /** Every pair of executions of one run alive at once, and whether both made API calls meanwhile. */
  overlaps(): ExecutionOverlap[] {
    const split = new Set(this.executions.filter((e) => e.part !== undefined).map((e) => e.runId));
    const found: ExecutionOverlap[] = [];
    for (const [run, executions] of this.byRun()) {
      for (const [index, first] of executions.entries()) {
        for (const second of executions.slice(index + 1)) {
          const from = Math.max(first.startedAt, second.startedAt);
          const to = Math.min(
            first.endedAt ?? Number.POSITIVE_INFINITY,
            second.endedAt ?? Number.POSITIVE_INFINITY,
          );
          if (to <= from) continue;
          const attributable = first.process !== second.process && !split.has(first.runId);
          const spans = attributable ? [this.#callSpan(first), this.#callSpan(second)] : undefined;
          const both =
            spans?.[0] && spans[1]
              ? { from: Math.max(spans[0].from, spans[1].from), to: Math.min(spans[0].to, spans[1].to) }
              : undefined;
          const during = (e: Execution) =>
            both
              ? this.#callsOf(e).filter((call) => call.sentAt < both.to && call.answeredAt > both.from).length
              : 0;
          found.push({
            run,
            first,
            second,
            aliveMs: (Number.isFinite(to) ? to : Date.now()) - from,
            callsMs: attributable ? Math.max(0, both ? both.to - both.from : 0) : undefined,
            callsDuring: attributable ? [during(first), during(second)] : undefined,
          });
        }
      }
    }
    return found;
  }

  #callsOf(execution: Execution): LoggedCall[] {
    const end = execution.endedAt ?? Number.POSITIVE_INFINITY;
    return this.calls.filter(
      (call) =>
        call.process === execution.process &&
        call.runId === execution.runId &&
        call.answeredAt >= execution.startedAt &&
        call.answeredAt <= end,
    );
  }

  #callSpan(execution: Execution): { from: number; to: number } | undefined {
    const calls = this.#callsOf(execution);
    if (calls.length === 0) return undefined;
    return {
      from: Math.min(...calls.map((call) => call.sentAt)),
      to: Math.max(...calls.map((call) => call.answeredAt)),
    };
  }
}

/** A duration in seconds, for a report. */
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** What the report takes from the logs; times in seconds from `zeroAt`. */
export function logFigures(logs: RunLogs, zeroAt: number) {
  const at = (ms: number) => `${ms >= zeroAt ? '+' : ''}${seconds(ms - zeroAt)}`;
  const runs = logs.byRun();
  const repeated = [...runs].flatMap(([run, executions]) => {
    if (executions.length < 2) return [];
    const byProcess = new Map<string, number>();
    for (const e of executions) byProcess.set(e.process, (byProcess.get(e.process) ?? 0) + 1);
    const processes = [...byProcess].map(([name, n]) => `${name} ×${n}`).join(', ');
    return [
      {
        run,
        count: executions.length,
        processes,
        startedAt: executions.map((e) => at(e.startedAt)).join(', '),
      },
    ];
  });
  const overlaps = logs.overlaps().map((o) => {
    const calls =
      o.callsMs === undefined
        ? o.first.process === o.second.process
          ? 'one process ran both: its call lines do not say which execution made them'
          : 'a split run: call lines name the run, not the part'
        : `both made API calls for ${seconds(o.callsMs)} (${o.callsDuring?.[0]} and ${o.callsDuring?.[1]} calls meanwhile)`;
    return `${o.run}: ${o.first.process} (from ${at(o.first.startedAt)}) and ${o.second.process} (from ${at(o.second.startedAt)}) alive at once for ${seconds(o.aliveMs)}; ${calls}`;
  });
  return {
    executions: { runs: runs.size, executions: logs.executions.length, repeated },
    overlaps,
    ownershipEnded: Object.fromEntries(logs.ownershipEnded),
    warnings: Object.fromEntries([...logs.warnings].sort((a, b) => b[1] - a[1])),
  };
}

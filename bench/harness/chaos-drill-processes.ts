import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LogLine, type Observed, type Proc, READ } from './chaos-drill-observed.js';
import { eventually } from './eventually.js';

/**
 * The chaos drill's nightshift processes (the built CLI): each started in a slot (`worker-2`)
 * whose restarts count up (`worker-2#1`), its output in a log file of its own, the lines the
 * drill reads handed to Observed as they come.
 */

const BIN = fileURLToPath(new URL('../../bin/nightshift.js', import.meta.url));

export type Role = Proc['role'];

/** What every process of the drill runs with. */
export interface ProcessSetup {
  env: Record<string, string>;
  logDir: string;
  policyFile: string;
  observed: Observed;
  progress: (line: string) => void;
}

export class ChaosProcesses {
  /** Every process started, running or not. */
  readonly all: Proc[] = [];
  readonly #instancesPerSlot = new Map<string, number>();
  readonly #setup: ProcessSetup;

  constructor(setup: ProcessSetup) {
    this.#setup = setup;
  }

  start(role: Role, slot: number): Proc {
    const { env, logDir, policyFile, observed, progress } = this.#setup;
    const name = `${role}-${slot}`;
    const generation = this.#instancesPerSlot.get(name) ?? 0;
    this.#instancesPerSlot.set(name, generation + 1);
    const instance = `${name}#${generation}`;
    const args = role === 'worker' ? ['worker'] : ['scheduler', policyFile];
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const file = createWriteStream(join(logDir, `${instance.replace('#', '.')}.log`));
    const proc: Proc = {
      role,
      slot,
      instance,
      child,
      startedAt: Date.now(),
      active: new Set(),
      // 'close', not 'exit': every line the process wrote has been read by then
      exited: new Promise((resolve) => {
        child.once('close', (code, signal) => {
          proc.exitedAt = Date.now();
          if (!proc.stopping) {
            progress(`!! ${instance} exited on its own (${code ?? signal})`);
            observed.ended(proc, proc.exitedAt, 'killed');
          }
          file.end(`\n# exit ${code ?? signal}\n`);
          resolve();
        });
      }),
    };
    readLines(proc, file, observed);
    child.stderr?.on('data', (chunk: Buffer) => file.write(chunk));
    this.all.push(proc);
    return proc;
  }

  /** The processes of a role neither exited nor being stopped. */
  alive(role: Role): Proc[] {
    return this.all.filter((p) => p.role === role && p.exitedAt === undefined && !p.stopping);
  }

  /** Waits for the process's ready line (`what`); throws if it exits first. */
  ready(proc: Proc, what: string): Promise<void> {
    return eventually(
      `${proc.instance} ${what}`,
      () => proc.readyAt !== undefined || proc.exitedAt !== undefined,
      30_000,
      50,
    ).then(() => {
      if (proc.exitedAt !== undefined)
        throw new Error(`${proc.instance} exited during start; see ${this.#setup.logDir}`);
    });
  }

  /** Stops a process and waits for it; returns the runs it was executing. */
  async stop(proc: Proc, signal: NodeJS.Signals): Promise<string[]> {
    const { observed } = this.#setup;
    proc.stopping = signal;
    if (proc.exitedAt === undefined) {
      if (signal === 'SIGKILL') proc.killedAt = Date.now();
      proc.child.kill(signal);
    }
    await proc.exited;
    return signal === 'SIGKILL'
      ? observed.ended(proc, proc.killedAt ?? Date.now(), 'killed')
      : observed.ended(proc, Date.now(), 'stopped');
  }

  /** SIGKILLs every process still running and waits for each: the drill's last word, whatever happened. */
  async killAll(): Promise<void> {
    await Promise.all(
      this.all.map(async (p) => {
        if (p.exitedAt === undefined) {
          p.stopping ??= 'SIGKILL';
          p.child.kill('SIGKILL');
          await p.exited;
        }
      }),
    );
  }
}

/** Copies the process's stdout to its log file and hands Observed the lines the drill reads. */
function readLines(proc: Proc, file: WriteStream, observed: Observed): void {
  let carry = '';
  proc.child.stdout?.on('data', (chunk: Buffer) => {
    file.write(chunk);
    const text = carry + chunk.toString('utf8');
    const lines = text.split('\n');
    carry = lines.pop() ?? '';
    for (const raw of lines) {
      const msg = /"msg":"((?:[^"\\]|\\.)*)"/.exec(raw)?.[1];
      const level = Number(/"level":(\d+)/.exec(raw)?.[1] ?? 0);
      if (msg === undefined || (!READ.has(msg) && level < 50)) continue;
      let line: LogLine & { time: number | string };
      try {
        line = JSON.parse(raw);
      } catch {
        continue; // a line cut short by SIGKILL
      }
      // pino writes the time as an ISO string (src/log/logger.ts) or as epoch milliseconds
      observed.line(proc, {
        ...line,
        time: typeof line.time === 'string' ? Date.parse(line.time) : line.time,
      });
    }
  });
}

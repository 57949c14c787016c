import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `nightshift` CLI processes for the drills (the built CLI, `node bin/nightshift.js`): each leads a
 * process group of its own and is stopped as a group; what it prints goes to a log file, and each
 * JSON line it logs (pino) to the drill, parsed.
 */

const BIN = fileURLToPath(new URL('../../bin/nightshift.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The sources the build compiles (tsconfig.build.json: src/ and jobs/), as paths from `root`. */
function compiledSources(root: string): string[] {
  return ['src', 'jobs'].flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => join(folder, file)),
  );
}

/**
 * Throws unless `npm run build` has run since any source it compiles last changed (every file of
 * src/ and jobs/ against its dist/ counterpart), naming the stale ones: the CLI processes that
 * tests and drills start run from dist/, and a stale build would test old code. `root` is the
 * repository's.
 */
export function assertBuilt(root = ROOT): void {
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js')))
    throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
  const stale = compiledSources(root).filter((source) => {
    const built = join(root, 'dist', source.replace(/\.ts$/, '.js'));
    return !existsSync(built) || statSync(built).mtimeMs < statSync(join(root, source)).mtimeMs;
  });
  if (stale.length === 0) return;
  const named = stale.slice(0, 3).join(', ');
  const more = stale.length > 3 ? ` and ${stale.length - 3} more` : '';
  throw new Error(`dist/ is older than ${named}${more}: run \`npm run build\` first`);
}

/** A log line of a nightshift process (pino JSON), its time in epoch milliseconds. */
export interface LogLine {
  level: number;
  time: number;
  msg: string;
  [field: string]: unknown;
}

export interface NightshiftProcess {
  /** The drill's name for it, e.g. `worker-2#1` (slot 2, first restart). */
  readonly name: string;
  readonly child: ChildProcess;
  readonly startedAt: number;
  /** Resolves with the exit code (or the signal) once it has exited and every line it wrote was read. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** When it exited; undefined while it runs. */
  exitedAt(): number | undefined;
  /** The signal the drill stopped it with; undefined for a process that exited on its own. */
  stoppedWith(): NodeJS.Signals | undefined;
  /** Sends `signal` to its whole group (unless it has exited) and waits for it to exit. */
  stop(signal: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

export interface StartOptions {
  name: string;
  /** Variables over this process's environment. */
  env: Record<string, string>;
  /** Where its output goes: `<logDir>/<name>.log` (`#` written as `.`). */
  logDir: string;
  /** Every JSON line it logs, parsed (lines cut short by a SIGKILL are passed over). */
  onLine?: (line: LogLine) => void;
}

/** Sends `signal` to the process group `child` leads (every nightshift process started here leads one). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    // the group is gone already
  }
}

/**
 * Starts `node bin/nightshift.js <args>` with `env` over this process's environment, in a process
 * group of its own, as a shell starts a command: stopping it (`killGroup`) stops whatever it
 * started too, and `process.kill(-pid, 'SIGINT')` is Ctrl-C. The one way benchmarks, drills and
 * tests start the CLI.
 */
export function spawnNightshift(
  args: readonly string[],
  env: Record<string, string | undefined>,
): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

/** Parses one line of pino JSON; pino writes the time as an ISO string or as epoch milliseconds. */
function parseLine(raw: string): LogLine | undefined {
  if (!raw.startsWith('{')) return undefined;
  try {
    const line = JSON.parse(raw) as LogLine & { time: number | string };
    return { ...line, time: typeof line.time === 'string' ? Date.parse(line.time) : line.time };
  } catch {
    return undefined;
  }
}

/** Starts `node bin/nightshift.js <args>` in a process group of its own. */
export function startNightshift(args: readonly string[], options: StartOptions): NightshiftProcess {
  const child = spawnNightshift(args, options.env);
  const file = createWriteStream(join(options.logDir, `${options.name.replace('#', '.')}.log`));
  let exitedAt: number | undefined;
  let stoppedWith: NodeJS.Signals | undefined;
  let carry = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    file.write(chunk);
    const lines = (carry + chunk.toString('utf8')).split('\n');
    carry = lines.pop() ?? '';
    if (!options.onLine) return;
    for (const raw of lines) {
      const line = parseLine(raw);
      if (line) options.onLine(line);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => file.write(chunk));
  // 'close', not 'exit': every line the process wrote has been read by then
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('close', (code, signal) => {
      exitedAt = Date.now();
      file.end(`\n# exit ${code ?? signal}\n`);
      resolve(code ?? signal);
    });
  });
  return {
    name: options.name,
    child,
    startedAt: Date.now(),
    exited,
    exitedAt: () => exitedAt,
    stoppedWith: () => stoppedWith,
    stop: async (signal) => {
      stoppedWith ??= signal;
      if (exitedAt === undefined) killGroup(child, signal);
      return exited;
    },
  };
}

/** What a one-shot command printed and how it ended. */
export interface CommandResult {
  code: number | NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a one-shot `nightshift` command to its end (its group SIGKILLed after `timeoutMs`). */
export async function runNightshift(
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<CommandResult> {
  const child = spawnNightshift(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
  const code = await new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('close', (exitCode, signal) => resolve(exitCode ?? signal));
  });
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * Validates a generated policy of 10,000 jobs, prints how long it takes, and checks its goal:
 * exits 1 when validating the varied policy takes more than GOAL_MS (the median of RUNS
 * validations after WARM_UP, in the main thread's CPU time), or when any validation gives a wrong
 * result. The first validation of the process (what one `nightshift validate` costs) is printed too.
 * `--quick` (bench:smoke) times only the measure with a goal, the varied policy's validation; every
 * other measure runs once, for its checks, and prints no time.
 * Run: npx tsx bench/policy-validate.ts [jobs] [--quick]   (the goal applies to 10,000 jobs)
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { actionRegistry } from '../jobs/index.js';
import { PolicyError, parsePolicy } from '../src/policy/index.js';
import { readYaml } from '../src/policy/yaml/index.js';
import { generatePolicy } from './harness/generated-policy.js';

/**
 * The goal for 10,000 varied jobs, in milliseconds of the main thread's CPU time (Linux; elsewhere
 * the process's): what the wall clock shows on an idle machine, where validation never waits. On
 * a machine shared with other work the wall clock also counts the time other processes held the
 * cores, and the process's CPU time that of the garbage collector's helper threads beside it.
 */
const GOAL_MS = 300;
const RUNS = 7;
/** Validations before the timed ones: the runtime optimizes the code over the first few. */
const WARM_UP = 3;

const { values, positionals } = parseArgs({
  options: { quick: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const jobCount = Number(positionals[0] ?? 10_000);
const env = { OPS_WEBHOOK: 'https://hooks.example.com/ops' };
const options = { registry: actionRegistry, env };

/** Milliseconds of CPU this process has used, on all its threads (the garbage collector's too). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Milliseconds the main thread has spent on a CPU (Linux's schedstat), else undefined. */
function mainThreadMs(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}
const ownMs = () => mainThreadMs() ?? cpuMs();

interface Timing {
  readonly median: number;
  readonly best: number;
  readonly cpu: number;
  /** The main thread's CPU time, median. */
  readonly main: number;
}

/** Wall-clock median and best, and the median CPU time, of RUNS runs after WARM_UP. */
function timeRuns(work: () => void): Timing {
  for (let run = 0; run < WARM_UP; run += 1) work();
  const times: number[] = [];
  const cpu: number[] = [];
  const main: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    const cpuStarted = cpuMs();
    const mainStarted = ownMs();
    work();
    times.push(performance.now() - started);
    cpu.push(cpuMs() - cpuStarted);
    main.push(ownMs() - mainStarted);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return { median: median(times), best: Math.min(...times), cpu: median(cpu), main: median(main) };
}

/** A wrong result ends the benchmark: its figures would be of something else. */
function check(condition: boolean, message: string): void {
  if (!condition) {
    process.stderr.write(`policy-validate: ${message}\n`);
    process.exit(1);
  }
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
/** `--quick`: a measure without a goal runs once, for its checks; undefined then. */
const timeUnlessQuick = (work: () => void): Timing | undefined => {
  if (!values.quick) return timeRuns(work);
  work();
  return undefined;
};
const times = (timing: Timing | undefined) =>
  timing
    ? `in ${ms(timing.median)} median, ${ms(timing.best)} best of ${RUNS} (CPU: ${ms(timing.main)} main thread, ${ms(timing.cpu)} all threads)`
    : '(checked once, not timed: --quick)';
const machine = `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load ${loadavg()[0]?.toFixed(2)}`;
process.stdout.write(`policy-validate (${machine})\n`);

let varied: Timing | undefined;
for (const [shape, minimal] of [
  ['varied jobs', false],
  ['minimal jobs', true],
] as const) {
  const text = generatePolicy(jobCount, minimal);
  const validateOnce = () => {
    const policy = parsePolicy(text, 'bench.yaml', options);
    check(policy.jobs.length === jobCount, `expected ${jobCount} jobs, got ${policy.jobs.length}`);
  };
  const started = performance.now();
  const mainStarted = ownMs();
  validateOnce();
  const first = { wall: performance.now() - started, main: ownMs() - mainStarted };
  const validate = minimal ? timeUnlessQuick(validateOnce) : timeRuns(validateOnce);
  // Reading the YAML alone: the part that grows with the file's bytes rather than with the checks.
  const yamlOnly = timeUnlessQuick(() => {
    check(readYaml(text, 'bench.yaml', env).value !== undefined, 'the YAML was not read');
  });
  // One problem: positions are worked out only then (a second reading of the file).
  const typo = `  pause-${jobCount - 2}:\n`;
  const at = text.indexOf(typo);
  const invalid = `${text.slice(0, at)}${typo}    timezone: Europe/Berln\n${text.slice(at + typo.length)}`;
  const line = text.slice(0, at).split('\n').length + 1;
  const problem = timeUnlessQuick(() => {
    try {
      parsePolicy(invalid, 'bench.yaml', options);
      check(false, 'a policy with an unknown time zone was accepted');
    } catch (error) {
      check(error instanceof PolicyError, `expected a PolicyError, got ${String(error)}`);
      const found = (error as PolicyError).problems.map((p) => `${p.line}:${p.col}`);
      check(found.join() === `${line}:15`, `expected the problem at ${line}:15, got ${found.join(', ')}`);
    }
  });
  if (!minimal) varied = validate;
  const kib = Math.round(Buffer.byteLength(text) / 1024);
  process.stdout.write(
    `  ${jobCount} ${shape} (${kib} KiB): validated ${times(validate)}\n` +
      `    the first validation of the process ${ms(first.wall)} (${ms(first.main)} of the main thread's CPU)\n` +
      `    reading the YAML alone ${times(yamlOnly)}\n` +
      `    with one problem, placed at its line and column ${times(problem)}\n`,
  );
}

if (jobCount === 10_000 && varied) {
  const met = varied.main <= GOAL_MS;
  process.stdout.write(
    `goal: 10,000 varied jobs in at most ${GOAL_MS} ms of the main thread's CPU (median): ${ms(varied.main)}, ${met ? 'met' : 'NOT MET'}\n`,
  );
  if (!met) process.exitCode = 1;
}

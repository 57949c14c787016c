/**
 * Validates a generated policy with 10,000 jobs and prints how long it takes.
 * Run: npx tsx bench/policy-validate.ts [jobs]
 */
import { cpus, loadavg } from 'node:os';
import { actionRegistry } from '../jobs/index.js';
import { parsePolicy } from '../src/policy/index.js';
import { readYaml } from '../src/policy/yaml/index.js';

const SCHEDULES = ['0 20 * * 1-5', '30 7 * * 1-5', '*/15 * * * *', '0 3 * * 0', '0 */2 * * *', '15 2 1 * *'];
const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'UTC'];

/**
 * A policy shaped like a large real one: named and inline targets, overrides on some jobs. With
 * `minimal`, every job has only its schedule, action and named target: the least text per job.
 */
export function generatePolicy(jobCount: number, minimal = false): string {
  const lines = [
    'version: 1',
    'defaults:',
    '  timezone: Europe/Berlin',
    '  retry: { attempts: 5, backoff: 10s }',
    '  concurrency: 16',
    'calendars:',
    '  holidays: [2026-12-24, 2026-12-25, 2026-12-31]',
    'notifications:',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the policy's own ${VAR} syntax
    '  ops: { url: "${OPS_WEBHOOK}", format: slack }',
    'targets:',
  ];
  for (let team = 0; team < 50; team += 1) {
    lines.push(
      `  team-${team}:`,
      `    workgroups: ["team-${team}-*"]`,
      `    exclude: ["team-${team}-core/*"]`,
    );
  }
  lines.push('jobs:');
  for (let index = 0; index < jobCount; index += 1) {
    const action = index % 2 === 0 ? 'pause' : 'resume';
    lines.push(`  ${action}-${index}:`);
    if (!minimal) lines.push(`    description: ${action} team ${index % 50} workspaces`);
    lines.push(`    schedule: "${SCHEDULES[index % SCHEDULES.length]}"`, `    action: ${action}`);
    if (minimal || index % 10 !== 0) lines.push(`    target: team-${index % 50}`);
    else lines.push(`    target: { workgroups: ["wg-${index}"], workspaces: ["ws-*"] }`);
    if (minimal) continue;
    if (index % 3 === 0) lines.push(`    timezone: ${ZONES[index % ZONES.length]}`);
    if (index % 4 === 0)
      lines.push('    retry: { attempts: 3 }', '    timeout: 15m', '    maxTargets: "25%"');
    if (index % 5 === 0) lines.push('    skip: [holidays]', '    notify: [ops]');
  }
  return `${lines.join('\n')}\n`;
}

const jobCount = Number(process.argv[2] ?? 10_000);
const env = { OPS_WEBHOOK: 'https://hooks.example.com/ops' };
const options = { registry: actionRegistry, env };

/** Milliseconds of CPU this process has used, on all its threads (the garbage collector's too). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Wall-clock median and best, and the median CPU time: on a machine shared with other work the
 * wall clock also counts the time other processes held the cores, the CPU time does not.
 */
function timeRuns(runs: number, work: () => void): { median: number; best: number; cpu: number } {
  work();
  const times: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const cpuStarted = cpuMs();
    work();
    times.push(performance.now() - started);
    cpu.push(cpuMs() - cpuStarted);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return { median: median(times), best: Math.min(...times), cpu: median(cpu) };
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const machine = `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load ${loadavg()[0]?.toFixed(2)}`;
let report = `policy-validate (${machine})\n`;
for (const [shape, minimal] of [
  ['varied jobs', false],
  ['minimal jobs', true],
] as const) {
  const text = generatePolicy(jobCount, minimal);
  const validate = timeRuns(5, () => {
    const policy = parsePolicy(text, 'bench.yaml', options);
    if (policy.jobs.length !== jobCount)
      throw new Error(`expected ${jobCount} jobs, got ${policy.jobs.length}`);
  });
  // Reading the YAML alone (the `yaml` package's AST, then the walk to values): the part that grows
  // with the file's bytes rather than with the checks.
  const yamlOnly = timeRuns(5, () => {
    readYaml(text, 'bench.yaml', env);
  });
  const kib = Math.round(Buffer.byteLength(text) / 1024);
  report +=
    `  ${jobCount} ${shape} (${kib} KiB): validated in ${ms(validate.median)} median, ${ms(validate.best)} best of 5` +
    ` (${ms(validate.cpu)} of CPU); reading the YAML alone ${ms(yamlOnly.median)} median (${ms(yamlOnly.cpu)} of CPU)\n`;
}
process.stdout.write(report);

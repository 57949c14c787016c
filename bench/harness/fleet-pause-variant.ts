import { type FleetSize, PARTS } from './fleet-pause-sim.js';

export interface Variant {
  label: string;
  kind: 'nightshift' | 'baseline';
  workers: number;
  fleet: FleetSize;
  rate?: number;
  logLevel?: string;
  /** One job over the whole fleet, its one run shared by the workers (`--one-run`). */
  oneRun?: boolean;
  /** With `oneRun`: the run is a window's off edge over the fleet (`--window`), not a `pause` run. */
  window?: boolean;
}

/** The workgroup name prefixes of each of `workers` shards: every part goes to one shard. */
export const shardsOf = (workers: number) =>
  Array.from({ length: workers }, (_, k) =>
    Array.from({ length: PARTS / workers }, (_, i) => `part${String(k + i * workers).padStart(2, '0')}-`),
  );

/** An hour of uptime three hours from now (UTC): the window is off whenever the benchmark runs. */
function offWindowUptime(): string {
  const hour = (new Date().getUTCHours() + 3) % 24;
  const end = hour === 23 ? '24' : String(hour + 1).padStart(2, '0');
  return `Mon-Sun ${String(hour).padStart(2, '0')}:00-${end}:00`;
}

/** The policy of a variant: K pause jobs (one per shard), or one window over the fleet. */
export function variantPolicy(
  variant: Variant,
  shards: string[][],
  perShard: number,
): { text: string; jobs: string[] } {
  if (variant.window)
    return {
      jobs: ['edge'],
      text: [
        'version: 1',
        'windows:',
        '  edge:',
        '    target: { workgroups: ["*"] }',
        `    uptime: "${offWindowUptime()}"`,
        '    timezone: UTC',
        `    concurrency: ${perShard}`,
        '    timeout: 30m',
      ].join('\n'),
    };
  return {
    jobs: shards.map((_, k) => `pause-${k}`),
    text: [
      'version: 1',
      'jobs:',
      ...shards.flatMap((prefixes, k) => [
        `  pause-${k}:`,
        '    schedule: "0 20 * * 1-5"',
        '    action: pause',
        `    target: { workgroups: [${prefixes.map((p) => `"${p}*"`).join(', ')}] }`,
        `    concurrency: ${perShard}`,
      ]),
    ].join('\n'),
  };
}

/**
 * `npm run bench`: runs every benchmark script in bench/ one after another, each in its own
 * process so none inherits another's warmed-up heap. Each script is also runnable alone
 * with `npx tsx bench/<name>.ts`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
/**
 * Not benchmarks: this one, the small run of them all (npm run bench:smoke), workers a benchmark
 * spawns (fleet-pause.ts's baseline), and the chaos and edge drills (npm run chaos).
 */
const NOT_BENCHMARKS = new Set([
  'run-all.ts',
  'smoke.ts',
  'fleet-baseline-worker.ts',
  'chaos-drill.ts',
  'edge-drill.ts',
]);
const scripts = readdirSync(dir)
  .filter((name) => name.endsWith('.ts') && !NOT_BENCHMARKS.has(name))
  .sort();

let failed = 0;
for (const script of scripts) {
  process.stdout.write(`\n== bench/${script}\n`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${script}`, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  if (run.status !== 0) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;

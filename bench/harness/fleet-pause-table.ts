import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Measured } from './fleet-pause-measure.js';
import { fleetSize } from './fleet-pause-sim.js';
import type { Variant } from './fleet-pause-variant.js';

/** One row of the table, as `--figures` writes it for bench/smoke.ts. */
export interface FigureRow {
  label: string;
  kind: Variant['kind'];
  workers: number;
  oneRun: boolean;
  window: boolean;
  rate: number | null;
  logLevel: string | null;
  targets: number;
  wallS: number;
  runsS: number[];
  idealS: number;
  /** Wall time over the baseline's with as many workers (plain nightshift rows only). */
  vsBaseline: number | null;
  /** One-run rows: wall time over the one-worker row's. */
  vsOneWorker: number | null;
  workersCpuS: number;
  cpuMsPerTarget: number;
  /** The workers' CPU a target in each run, in ms (the mean is `cpuMsPerTarget`). */
  cpuMsPerTargetRuns: number[];
  problems: string[];
}

export const median = (numbers: number[]) =>
  [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] ?? 0;
export const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
export const count = (n: number) => n.toLocaleString('en-US');

export const TABLE_HEADER = `  ${'variant'.padEnd(42)} ${'N'.padStart(7)}   wall s  ideal s  ratio  vs base   CPU s: workers    sim  redis`;

function figureRow(
  variant: Variant,
  result: Measured,
  times: { wallS: number; idealS: number; base?: number },
): FigureRow {
  const targets = fleetSize(variant.fleet);
  return {
    label: variant.label,
    kind: variant.kind,
    workers: variant.workers,
    oneRun: variant.oneRun ?? false,
    window: variant.window ?? false,
    rate: variant.rate ?? null,
    logLevel: variant.logLevel ?? null,
    targets,
    wallS: times.wallS,
    runsS: result.wallMs.map((ms) => ms / 1000),
    idealS: times.idealS,
    vsBaseline: times.base ? times.wallS / times.base : null,
    vsOneWorker: null,
    workersCpuS: result.workersCpu,
    cpuMsPerTarget: (result.workersCpu * 1000) / targets,
    cpuMsPerTargetRuns: result.workersCpuRuns.map((cpu) => (cpu * 1000) / targets),
    problems: result.problems,
  };
}

/** The table printed as the variants are measured, its rows kept for `--figures`; `failed` once a check failed. */
export class ResultTable {
  readonly figures: FigureRow[] = [];
  failed = false;
  /** The baseline's wall time by number of workers. */
  readonly #baselines = new Map<string, number>();

  constructor(
    private readonly measure: (variant: Variant) => Promise<Measured>,
    private readonly repeat: number,
  ) {}

  row(label: string, n: number, wallS: number, idealS: number, extra: Partial<Measured> & { base?: number }) {
    process.stdout.write(
      `${[
        `  ${label.padEnd(42)}`,
        count(n).padStart(7),
        fmt(wallS).padStart(8),
        fmt(idealS).padStart(8),
        `${fmt(wallS / idealS)}×`.padStart(7),
        (extra.base ? `${fmt(wallS / extra.base)}×` : '').padStart(8),
        fmt(extra.workersCpu ?? Number.NaN).padStart(17),
        fmt(extra.simCpu ?? Number.NaN).padStart(6),
        fmt(extra.redisCpu ?? Number.NaN).padStart(6),
      ].join(' ')}\n`,
    );
  }

  /** Measures a variant, prints its row, runs and failed checks; returns its median wall time in s. */
  async run(variant: Variant, idealS: number): Promise<number> {
    const result = await this.measure(variant);
    const wallS = median(result.wallMs) / 1000;
    const key = `${variant.workers}`;
    if (variant.kind === 'baseline') this.#baselines.set(key, wallS);
    const base =
      variant.kind === 'nightshift' && !variant.rate && !variant.logLevel
        ? this.#baselines.get(key)
        : undefined;
    this.row(variant.label, fleetSize(variant.fleet), wallS, idealS, { ...result, base });
    this.figures.push(figureRow(variant, result, { wallS, idealS, base }));
    if (this.repeat > 1)
      process.stdout.write(
        `${' '.repeat(4)}runs: ${result.wallMs.map((ms) => fmt(ms / 1000)).join(', ')} s; workers' CPU ${result.workersCpuRuns.map((cpu) => fmt(cpu)).join(', ')} s\n`,
      );
    for (const problem of result.problems) {
      this.failed = true;
      process.stdout.write(`    CHECK FAILED: ${problem}\n`);
    }
    return wallS;
  }

  writeFigures(file: string | undefined): void {
    if (file) writeFileSync(file, `${JSON.stringify({ load: loadavg(), rows: this.figures }, null, 2)}\n`);
  }
}

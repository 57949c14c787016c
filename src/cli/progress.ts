import { z } from 'zod';
import type { Settings } from '../config/index.js';
import { PROGRESS_LINE_MS, PROGRESS_REDRAW_MS, PROGRESS_TICK_MS } from '../config/index.js';

/**
 * How `nightshift run` shows targets done while it waits:
 * - `bar`: one line redrawn in place, `[###.......] 12/40 targets  00:07`, when stderr is a
 *   terminal;
 * - `lines`: `12/40 targets done  00:07` every 10% of the targets or every few seconds, when
 *   stderr is not a terminal, when `CI` is set (CI logs keep every `\r` redraw) or `TERM=dumb`;
 * - `off`: with `--quiet`, or when `NIGHTSHIFT_LOG_FORMAT=json` is set explicitly: stderr then
 *   carries only JSON lines for whatever collects them (the run's own API call lines already
 *   say how far it got).
 * Progress always goes to stderr, so stdout holds only the summary (pure JSON with `--json`).
 */
export type ProgressMode = 'bar' | 'lines' | 'off';

export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export function progressMode(
  stream: ProgressStream,
  settings: Pick<Settings, 'log' | 'terminal'>,
  { quiet = false } = {},
): ProgressMode {
  if (quiet) return 'off';
  if (settings.log.format === 'json') return 'off';
  if (stream.isTTY !== true || settings.terminal.ci || settings.terminal.dumb) return 'lines';
  return 'bar';
}

/** `00:07`, `12:34`, `1:02:03`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(seconds / 3600);
  const mm = String(Math.floor((seconds % 3600) / 60)).padStart(2, '0');
  const ss = String(seconds % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** `[###.......] 12/40 targets  00:07`: the bar is full only when every target is done. */
export function formatBar(done: number, total: number, elapsedMs: number, width = 10): string {
  const filled = total > 0 ? Math.min(width, Math.floor((done / total) * width)) : 0;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} targets  ${formatElapsed(elapsedMs)}`;
}

/** `12/40 targets done  00:07` */
export function formatProgressLine(done: number, total: number, elapsedMs: number): string {
  return `${done}/${total} targets done  ${formatElapsed(elapsedMs)}`;
}

export interface ProgressOptions {
  readonly mode: ProgressMode;
  readonly stream: ProgressStream;
  /** Milliseconds since some epoch. Default: `Date.now`. */
  readonly now?: () => number;
  /** In `lines` mode, a line at least this often while targets keep finishing. Default 5000. */
  readonly lineIntervalMs?: number;
  /** In `bar` mode, the most redraws per interval (the last state is always drawn). Default 100. */
  readonly redrawIntervalMs?: number;
  /** In `bar` mode, redraw this often so the clock moves while targets are slow; 0 never. Default 1000. */
  readonly tickMs?: number;
}

/** Shows how many targets of a run are done, as `mode` says; `finish()` ends the display. */
export class ProgressDisplay {
  readonly #options: ProgressOptions;
  readonly #now: () => number;
  readonly #startedAt: number;
  #done = 0;
  #total = 0;
  /** What was last written (bar) or last printed as a line (lines), as `done` counts. */
  #shownDone = -1;
  #shownAt = Number.NEGATIVE_INFINITY;
  #drawn = false;
  #finished = false;
  #ticker: NodeJS.Timeout | undefined;

  constructor(options: ProgressOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#startedAt = this.#now();
  }

  get mode(): ProgressMode {
    return this.#options.mode;
  }

  /** `done` of `total` targets have finished (in any outcome). */
  update(done: number, total: number): void {
    if (this.#finished || this.#options.mode === 'off' || total <= 0) return;
    this.#done = done;
    this.#total = total;
    if (this.#options.mode === 'bar') {
      const due = this.#now() - this.#shownAt >= (this.#options.redrawIntervalMs ?? PROGRESS_REDRAW_MS);
      if (due || (done >= total && done !== this.#shownDone)) this.#draw();
      this.#startTicker();
      return;
    }
    if (done === this.#shownDone) return;
    const step = Math.max(1, Math.ceil(total / 10));
    const stepped = done - Math.max(0, this.#shownDone) >= step;
    const waited = this.#now() - this.#shownAt >= (this.#options.lineIntervalMs ?? PROGRESS_LINE_MS);
    if (done >= total || stepped || waited) this.#printLine();
  }

  /** Shows the last state if it was not shown yet and ends the bar's line. Idempotent. */
  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#ticker) clearInterval(this.#ticker);
    if (this.#options.mode === 'bar' && this.#drawn) {
      this.#options.stream.write(`\r\u001b[2K${this.#bar()}\n`);
    } else if (this.#options.mode === 'lines' && this.#total > 0 && this.#done !== this.#shownDone) {
      this.#printLine();
    }
  }

  #bar(): string {
    return formatBar(this.#done, this.#total, this.#now() - this.#startedAt);
  }

  /**
   * Clears the line, draws the bar and returns to column 0: a log line written meanwhile then
   * overwrites the bar instead of being appended to it, and the next redraw puts the bar back
   * below it.
   */
  #draw(): void {
    this.#options.stream.write(`\r\u001b[2K${this.#bar()}\r`);
    this.#drawn = true;
    this.#shownDone = this.#done;
    this.#shownAt = this.#now();
  }

  #printLine(): void {
    this.#options.stream.write(
      `${formatProgressLine(this.#done, this.#total, this.#now() - this.#startedAt)}\n`,
    );
    this.#shownDone = this.#done;
    this.#shownAt = this.#now();
  }

  #startTicker(): void {
    const tickMs = this.#options.tickMs ?? PROGRESS_TICK_MS;
    if (this.#ticker || tickMs <= 0) return;
    this.#ticker = setInterval(() => this.#draw(), tickMs);
    this.#ticker.unref();
  }
}

/** The progress a worker reports through BullMQ (`job.updateProgress({ done, total })`). */
const JobProgressSchema = z.object({
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
});

/** A BullMQ job's `progress` as `{ done, total }`, or undefined before the worker reported any. */
export function jobProgress(value: unknown): { done: number; total: number } | undefined {
  const parsed = JobProgressSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

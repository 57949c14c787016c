import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  formatBar,
  formatElapsed,
  formatProgressLine,
  jobProgress,
  ProgressDisplay,
  type ProgressMode,
  progressMode,
} from '../../../src/cli/progress.js';
import { loadSettings } from '../../../src/config/index.js';

/** A stream that keeps what is written; a terminal or not as told. */
function fakeStream(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, chunks, write: (text: string) => chunks.push(text), text: () => chunks.join('') };
}

/** A display on a fake stream and a clock the test moves by hand. */
function display(mode: ProgressMode, options: { lineIntervalMs?: number } = {}) {
  const stream = fakeStream(mode === 'bar');
  let now = 0;
  const progress = new ProgressDisplay({ mode, stream, now: () => now, tickMs: 0, ...options });
  return {
    stream,
    progress,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('progressMode', () => {
  it.each([
    ['a terminal', true, {}, {}, 'bar'],
    ['a pipe or file', false, {}, {}, 'lines'],
    ['a terminal under CI', true, { CI: 'true' }, {}, 'lines'],
    ['a terminal with TERM=dumb', true, { TERM: 'dumb' }, {}, 'lines'],
    ['a terminal with CI=false', true, { CI: 'false' }, {}, 'bar'],
    ['a terminal with CI empty', true, { CI: '' }, {}, 'bar'],
    ['--quiet on a terminal', true, {}, { quiet: true }, 'off'],
    ['--quiet on a pipe', false, {}, { quiet: true }, 'off'],
    ['NIGHTSHIFT_LOG_FORMAT=json on a terminal', true, { NIGHTSHIFT_LOG_FORMAT: 'json' }, {}, 'off'],
    ['NIGHTSHIFT_LOG_FORMAT=json on a pipe', false, { NIGHTSHIFT_LOG_FORMAT: 'json' }, {}, 'off'],
    ['NIGHTSHIFT_LOG_FORMAT=pretty on a terminal', true, { NIGHTSHIFT_LOG_FORMAT: 'pretty' }, {}, 'bar'],
  ] as const)('%s: %s', (_what, isTTY, env, flags, expected) => {
    expect(progressMode(fakeStream(isTTY), loadSettings(env), flags)).toBe(expected);
  });
});

describe('progress formats', () => {
  it('shows elapsed time as mm:ss, and h:mm:ss past an hour', () => {
    expect(formatElapsed(0)).toBe('00:00');
    expect(formatElapsed(7_999)).toBe('00:07');
    expect(formatElapsed(754_000)).toBe('12:34');
    expect(formatElapsed(3_723_000)).toBe('1:02:03');
  });

  it('draws a ten-cell bar that is full only when every target is done', () => {
    expect(formatBar(12, 40, 7_000)).toBe('[###.......] 12/40 targets  00:07');
    expect(formatBar(20, 40, 0)).toBe('[#####.....] 20/40 targets  00:00');
    expect(formatBar(39, 40, 0)).toBe('[#########.] 39/40 targets  00:00');
    expect(formatBar(40, 40, 65_000)).toBe('[##########] 40/40 targets  01:05');
  });

  it('writes a plain line as "done/total targets done"', () => {
    expect(formatProgressLine(12, 40, 7_000)).toBe('12/40 targets done  00:07');
  });
});

describe('ProgressDisplay on a terminal (bar)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('redraws one line in place with \\r and clear-line, and ends it with a newline', () => {
    const { stream, progress, advance } = display('bar');
    progress.update(1, 4);
    advance(1_000);
    progress.update(2, 4);
    advance(1_000);
    progress.update(4, 4);
    progress.finish();
    expect(stream.chunks).toEqual([
      '\r\u001b[2K[##........] 1/4 targets  00:00\r',
      '\r\u001b[2K[#####.....] 2/4 targets  00:01\r',
      '\r\u001b[2K[##########] 4/4 targets  00:02\r',
      '\r\u001b[2K[##########] 4/4 targets  00:02\n',
    ]);
    expect(stream.text().split('\n')).toHaveLength(2);
  });

  it('redraws at most every 100 ms, but always draws the last target', () => {
    const { stream, progress, advance } = display('bar');
    for (let done = 1; done <= 50; done++) {
      progress.update(done, 50);
      advance(10);
    }
    // 50 updates 10 ms apart: a redraw every 100 ms, plus the final state
    expect(stream.chunks.length).toBeLessThanOrEqual(7);
    expect(stream.chunks.at(-1)).toContain('50/50 targets');
  });

  it('writes nothing, not even a newline, when no target was reported', () => {
    const { stream, progress } = display('bar');
    progress.update(0, 0);
    progress.finish();
    expect(stream.chunks).toEqual([]);
  });

  it('moves the clock between targets on its own ticker, and stops it on finish', () => {
    vi.useFakeTimers();
    const stream = fakeStream(true);
    const progress = new ProgressDisplay({ mode: 'bar', stream, tickMs: 1_000 });
    progress.update(1, 3);
    vi.advanceTimersByTime(2_500);
    expect(stream.chunks).toHaveLength(3);
    expect(stream.chunks.at(-1)).toContain('1/3 targets  00:02');
    progress.finish();
    vi.advanceTimersByTime(5_000);
    expect(stream.chunks).toHaveLength(4);
  });
});

describe('ProgressDisplay off a terminal (lines)', () => {
  it('prints a line for the first target, each further 10%, and the last, never \\r', () => {
    const { stream, progress } = display('lines');
    for (let done = 1; done <= 40; done++) progress.update(done, 40);
    progress.finish();
    expect(stream.text()).not.toContain('\r');
    expect(stream.text()).not.toContain('\u001b');
    expect(stream.chunks.map((line) => line.split(' ')[0])).toEqual([
      '1/40',
      '5/40',
      '9/40',
      '13/40',
      '17/40',
      '21/40',
      '25/40',
      '29/40',
      '33/40',
      '37/40',
      '40/40',
    ]);
  });

  it('prints a line after a few seconds of slow progress even within 10%', () => {
    const { stream, progress, advance } = display('lines', { lineIntervalMs: 5_000 });
    progress.update(1, 1000);
    advance(4_000);
    progress.update(2, 1000);
    advance(1_500);
    progress.update(3, 1000);
    expect(stream.chunks).toEqual(['1/1000 targets done  00:00\n', '3/1000 targets done  00:05\n']);
  });

  it('prints the last state on finish when it was not printed yet, once', () => {
    const { stream, progress } = display('lines');
    progress.update(1, 100);
    progress.update(2, 100);
    progress.finish();
    progress.finish();
    expect(stream.chunks).toEqual(['1/100 targets done  00:00\n', '2/100 targets done  00:00\n']);
  });

  it('never repeats a line for the same count', () => {
    const { stream, progress, advance } = display('lines');
    progress.update(5, 5);
    advance(10_000);
    progress.update(5, 5);
    progress.finish();
    expect(stream.chunks).toEqual(['5/5 targets done  00:00\n']);
  });
});

describe('ProgressDisplay off', () => {
  it('writes nothing at all', () => {
    const { stream, progress } = display('off');
    progress.update(1, 2);
    progress.update(2, 2);
    progress.finish();
    expect(stream.chunks).toEqual([]);
  });
});

describe('jobProgress', () => {
  it('reads the { done, total } a worker reports, and nothing else', () => {
    expect(jobProgress({ done: 3, total: 9 })).toEqual({ done: 3, total: 9 });
    expect(jobProgress(0)).toBeUndefined();
    expect(jobProgress({ done: -1, total: 9 })).toBeUndefined();
    expect(jobProgress(undefined)).toBeUndefined();
  });
});

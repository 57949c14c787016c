import { describe, expect, it } from 'vitest';
import { isListening } from '../../../src/store/index.js';
import { assertBuilt, eventually, startCli } from '../../helpers/engine.js';

const JOBS = ['restore-drill', 'allow-list-audit'];

describe('npm run demo -- --duration 75s', () => {
  it('starts its own Redis and simulator, reconciles the window through an off period, runs each job, and exits 0 with drift and savings', async () => {
    assertBuilt();
    // 75 s hold at least one even minute, when the window pauses the non-production workspaces
    // nothing configured, as after `npm ci`: no policy key either (the demo makes one up)
    const demo = startCli(['demo', '--duration', '75s'], {
      REDIS_URL: '',
      NIGHTSHIFT_REDIS_PREFIX: '',
      NIGHTSHIFT_POLICY_KEY: '',
      NO_COLOR: '1',
    });
    const code = await demo.exited;
    const output = demo.output();
    expect(code, output).toBe(0);
    expect(output).toContain('(private redis-server)');
    // the console's address is the first thing printed; the queue dashboard is listed below
    expect(output.split('\n')[0]).toMatch(/^console: http:\/\/127\.0\.0\.1:\d+\/ \(/);
    expect(output).toMatch(/\n {2}queue +http:\/\/127\.0\.0\.1:\d+\/ui\n/);
    expect(output).toMatch(/fleet: \d+ Active/);
    const summary = output.slice(output.indexOf('\nsummary'));
    for (const job of [...JOBS, 'office-hours'])
      expect(summary, job).toMatch(new RegExp(`\\n  ${job} +\\d+ +succeeded(, succeeded)*\\n`));
    expect(summary).toMatch(/\d+ runs, 0 failed or partial, \d+ findings/);
    // the window paused: a line of its run that acted, and owned hours to show for it
    expect(output).toMatch(/ office-hours +succeeded +\d+ targets, \d+ done/);
    expect(summary).toMatch(/\n {2}drift: \d+ of \d+ workspace\(s\) under windows differ/);
    const savings =
      /\n {2}savings: (\d+\.\d\d) hours paused by nightshift across (\d+) workspace\(s\), estimated cost avoided (\d+\.\d\d) EUR/.exec(
        summary,
      );
    expect(savings, summary).not.toBeNull();
    expect(Number(savings?.[1])).toBeGreaterThan(0);
    expect(Number(savings?.[2])).toBeGreaterThan(0);
  }, 150_000);
});

describe('npm run demo, stopped or refused', () => {
  it('stops on Ctrl-C (SIGINT to its whole process group, its redis-server too) with a summary, exit 0, and no redis-server left', async () => {
    assertBuilt();
    const demo = startCli(['demo'], { REDIS_URL: '', NIGHTSHIFT_REDIS_PREFIX: '', NO_COLOR: '1' });
    const url = await eventually(
      'the demo listing its Redis',
      () => /redis +(redis:\/\/\S+)/.exec(demo.output())?.[1],
    );
    await eventually('the first fleet line', () => /fleet: \d+ Active/.test(demo.output()));
    process.kill(-(demo.child.pid as number), 'SIGINT');
    const started = Date.now();
    expect(await demo.exited, demo.output()).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(demo.output()).toMatch(/\nsummary\n[\s\S]* runs, 0 failed or partial/);
    expect(await isListening(Number(new URL(url).port))).toBe(false);
  }, 60_000);

  it('refuses a bad setting at once (exit 2, naming it) before starting Redis or the simulator', async () => {
    assertBuilt();
    const demo = startCli(['demo'], { REDIS_URL: '', NIGHTSHIFT_HTTP_PORT: 'abc' });
    expect(await demo.exited).toBe(2);
    expect(demo.output()).toBe(
      'nightshift: NIGHTSHIFT_HTTP_PORT must be a port number (0 for any free port) or off, got "abc"\n',
    );
  });
});

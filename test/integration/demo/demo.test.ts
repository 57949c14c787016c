import { describe, expect, it } from 'vitest';
import { assertBuilt, startCli } from '../../helpers/engine.js';

const JOBS = ['evening-pause', 'morning-resume', 'restore-drill', 'allow-list-audit'];

describe('npm run demo -- --duration 60s', () => {
  it('starts its own Redis and simulator, runs each job of the one-minute day once, and exits 0 with a summary', async () => {
    assertBuilt('src/cli/commands/demo.ts');
    const demo = startCli(['demo', '--duration', '60s'], {
      REDIS_URL: '',
      NIGHTSHIFT_REDIS_PREFIX: '',
      NO_COLOR: '1',
    });
    const code = await demo.exited;
    const output = demo.output();
    expect(code, output).toBe(0);
    expect(output).toContain('(private redis-server)');
    expect(output).toMatch(/dashboard +http:\/\/127\.0\.0\.1:\d+\/ui/);
    expect(output).toMatch(/fleet: \d+ Active/);
    const summary = output.slice(output.indexOf('\nsummary'));
    for (const job of JOBS) expect(summary, job).toMatch(new RegExp(`\\n  ${job} +1 +succeeded\\n`));
    expect(summary).toMatch(/4 runs, 0 failed or partial, \d+ findings/);
  }, 120_000);
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { policySha } from '../../../src/store/policy-store.js';
import { aliasBomb } from '../../helpers/alias-bomb.js';
import { assertBuilt, type CliProcess, eventually, type LogLine, startCli } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis, uniquePrefix } from '../../helpers/redis.js';
import { parseExposition, sampleValue } from '../ops/exposition.js';
import { IDLE_POLICY, killGroup, logLines, signalGroup, startService } from '../ops/service-group.js';

const PAST_BUDGET =
  'boom[24]: alias "*a" copies 20001 values, past the 500000 that aliases may add to a policy (an alias bomb?)';

let dir: string;
let redis: TestRedis;
const services: CliProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-hostile-policy-'));
  // each CLI writes what it cost (rusage) where this preload is told to
  writeFileSync(
    join(dir, 'rusage.mjs'),
    "import { writeFileSync } from 'node:fs';\n" +
      "process.on('exit', () => writeFileSync(process.env.RUSAGE_FILE, JSON.stringify(process.resourceUsage())));\n",
  );
  redis = await startTestRedis();
});
afterEach(() => {
  for (const service of services.splice(0)) killGroup(service);
});
afterAll(async () => {
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `nightshift validate <file>`: its exit code, stderr, CPU seconds and peak RSS in MB. */
async function validate(name: string, text: string) {
  const file = join(dir, name);
  writeFileSync(file, text);
  const rusage = join(dir, `${name}.rusage.json`);
  const cli = startCli(['validate', file], {
    NODE_OPTIONS: `--import=${join(dir, 'rusage.mjs')}`,
    RUSAGE_FILE: rusage,
  });
  const exit = await cli.exited;
  const usage = JSON.parse(readFileSync(rusage, 'utf8')) as NodeJS.ResourceUsage;
  return {
    file,
    exit,
    stderr: cli.stderr(),
    cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
    peakMb: usage.maxRSS / 1024,
  };
}

describe('a hostile policy file is refused, not expanded', () => {
  it('validate refuses a 90 kB alias bomb (20,000 values copied 2,500 times): exit 2 at the alias past the budget, within 5 s of CPU and 300 MB', async () => {
    const text = aliasBomb(20_000, 2_500);
    expect(text.length).toBeGreaterThan(89_000);
    const result = await validate('bomb-90k.yaml', text);
    expect(result.exit).toBe(2);
    expect(result.stderr).toContain(`${result.file}:4:104: ${PAST_BUDGET}\n`);
    // before the budget: 4.3 s and 1,065 MB; the CLI alone takes about 140 MB
    expect(result.cpuSeconds).toBeLessThan(5);
    expect(result.peakMb).toBeLessThan(300);
  });

  it('validate refuses a 3 MB alias bomb unread, at the alias past the most a policy may hold', async () => {
    const text = aliasBomb(20_000, 730_000);
    expect(text.length).toBeGreaterThan(2_990_000);
    const small = await validate('small.yaml', 'version: 1\njobs: {}\n');
    const result = await validate('bomb-3m.yaml', text);
    expect(result.exit).toBe(2);
    expect(result.stderr).toBe(
      `${result.file}:4:200008: more than 50000 aliases: refused unread, as an alias bomb\n`,
    );
    // what the refusal costs beyond validating an empty policy (0.4 s and 48 MB here, the file
    // read and lexed up to its 50,001st alias included): it used to be a heap exhausted
    expect(result.cpuSeconds - small.cpuSeconds).toBeLessThan(1);
    expect(result.peakMb - small.peakMb).toBeLessThan(80);
  });

  it('a hot reload of an alias bomb leaves the scheduler on the last good policy, within a 256 MB heap', async () => {
    const file = join(dir, 'scheduler.yaml');
    writeFileSync(file, IDLE_POLICY);
    const scheduler = startService(['scheduler', file], {
      REDIS_URL: redis.url,
      NIGHTSHIFT_REDIS_PREFIX: uniquePrefix('hostile-reload'),
      NIGHTSHIFT_LOG_FORMAT: 'json',
      NODE_OPTIONS: '--max-old-space-size=256',
    });
    services.push(scheduler);
    const line = (msg: string) =>
      eventually(msg, () => logLines(scheduler).find((candidate) => candidate.msg === msg), 15_000).catch(
        (error: Error) => {
          throw new Error(`${error.message}\n--- output:\n${scheduler.output()}`);
        },
      );
    const { address } = (await line('ops server listening')) as LogLine & { address: string };
    await line('scheduler started');

    await writeFile(`${file}.tmp`, aliasBomb(20_000, 2_500));
    await rename(`${file}.tmp`, file);
    const refused = await line('new policy is invalid; keeping the last good one');
    expect(refused.problems).toContain(`${file}:4:104: ${PAST_BUDGET}`);

    const ready = (await (await fetch(`${address}/readyz`)).json()) as Record<string, unknown>;
    expect(ready).toMatchObject({ ready: true, degraded: ['policy'] });
    const samples = parseExposition(await (await fetch(`${address}/metrics`)).text());
    expect(sampleValue(samples, 'nightshift_policy_info', { sha: policySha(IDLE_POLICY) })).toBe(1);
    expect(sampleValue(samples, 'nightshift_policy_rejected')).toBe(1);
    expect((await signalGroup(scheduler, 'SIGTERM', 15_000)).exit).toBe(0);
  }, 60_000);
});

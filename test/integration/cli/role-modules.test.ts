import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY } from '../../../src/sim/index.js';
import { assertBuilt, eventually, logged, startCli, useEngineHarness } from '../../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 2 });
const TRACE_HOOK = fileURLToPath(new URL('../../helpers/module-trace.mjs', import.meta.url));

const POLICY = `version: 1
jobs:
  evening-pause:
    schedule: "0 20 * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

/** What a role must leave unloaded, by the path its modules have. */
const SIMULATOR = '/dist/src/sim/';
const DASHBOARD = '/node_modules/@bull-board/';
const HTTP_CLIENT = '/node_modules/undici/';
const PRETTY_LOGS = '/node_modules/pino-pretty/';
const OTHER_COMMANDS =
  /\/dist\/src\/cli\/(commands\/(demo|sim|run|plan|drift|adopt|hold|history)|inline-run|fleet-report)\.js$/;

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'nightshift-role-modules-'));
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `nightshift <args>` recording every module it loads; resolves once it logged `started`. */
async function traced(name: string, args: string[], started: string) {
  const trace = join(dir, `${name}.modules`);
  const cli = startCli(args, {
    NODE_OPTIONS: `--import ${TRACE_HOOK}`,
    NIGHTSHIFT_TEST_MODULE_TRACE: trace,
    REDIS_URL: harness.server.url,
    NIGHTSHIFT_REDIS_PREFIX: harness.engine(name).prefix,
    NIGHTSHIFT_API_URL: harness.sim.url,
    NIGHTSHIFT_API_KEY: DEFAULT_API_KEY,
    NIGHTSHIFT_LOG_FORMAT: 'json',
  });
  const address = (await logged(cli, 'ops server listening')).address as string;
  await logged(cli, started);
  const modules = () => readFileSync(trace, 'utf8').split('\n').filter(Boolean);
  return { cli, address, modules };
}

describe('each role loads what it serves, and nothing else', () => {
  it('a scheduler loads neither the simulator, the dashboard, the HTTP client nor the other commands; the dashboard comes with its first request', async () => {
    const { cli, address, modules } = await traced(
      'scheduler',
      ['scheduler', join(dir, 'policy.yaml')],
      'scheduler started',
    );
    try {
      const loaded = modules();
      expect(loaded.some((url) => url.includes('/dist/src/scheduler/'))).toBe(true);
      for (const unused of [SIMULATOR, DASHBOARD, HTTP_CLIENT, PRETTY_LOGS])
        expect(loaded.filter((url) => url.includes(unused))).toEqual([]);
      expect(loaded.filter((url) => OTHER_COMMANDS.test(url))).toEqual([]);

      const page = await fetch(`${address}/ui`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('nightshift');
      await eventually('the dashboard loaded', () => modules().some((url) => url.includes(DASHBOARD)));
    } finally {
      await cli.stop('SIGTERM');
    }
  });

  it('a scheduler gives the garbage of loading 2,000 jobs back before its first tick, not when V8 finds it idle', async () => {
    const file = join(dir, 'large.yaml');
    const jobs = Array.from(
      { length: 2_000 },
      (_, i) =>
        `  pause-${i}:\n    schedule: "${i % 60} 20 * * 1-5"\n    action: pause\n    target: { workgroups: ["wg-${i}"] }\n`,
    );
    writeFileSync(file, `version: 1\njobs:\n${jobs.join('')}`);
    const { cli } = await traced('large', ['scheduler', file], 'scheduler started');
    try {
      const memory = () => {
        const status = readFileSync(`/proc/${cli.child.pid}/status`, 'utf8');
        const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
        return { rss: kB('VmRSS'), peak: kB('VmHWM') };
      };
      // held at its peak, the process would keep all of it for about 100 s; collected, it keeps
      // what its jobs need (measured: 138 MB of a 197 MB peak, the policy read line by line)
      await eventually('RSS below 80 % of the peak', () => {
        const { rss, peak } = memory();
        return rss < 0.8 * peak;
      });
    } finally {
      await cli.stop('SIGTERM');
    }
  });

  it('a worker loads the HTTP client it calls the API with, but neither the simulator nor the dashboard', async () => {
    const { cli, modules } = await traced('worker', ['worker'], 'worker started');
    try {
      const loaded = modules();
      expect(loaded.some((url) => url.includes(HTTP_CLIENT))).toBe(true);
      for (const unused of [SIMULATOR, DASHBOARD, PRETTY_LOGS])
        expect(loaded.filter((url) => url.includes(unused))).toEqual([]);
      expect(loaded.filter((url) => OTHER_COMMANDS.test(url))).toEqual([]);
    } finally {
      await cli.stop('SIGTERM');
    }
  });
});

import { describe, expect, it } from 'vitest';
import { policySha } from '../../../src/store/policy-store.js';
import { systemClock } from '../../../src/time/index.js';
import { eventually, useEngineHarness } from '../../helpers/engine.js';

const harness = useEngineHarness({ workgroups: 1, workspacesPerWorkgroup: 1 });

const POLICY = `version: 1
jobs:
  every-second:
    schedule: "* * * * * *"
    action: pause
    target: { workgroups: ["*"] }
`;

describe('a scheduler running one policy for a long time', () => {
  it('renews the TTL of its policy text in Redis, so the runs it enqueues never name a policy gone from it', async () => {
    const engine = harness.engine('policy-ttl');
    let offset = 0;
    const scheduler = engine.scheduler({ clock: { ...systemClock, now: () => Date.now() + offset } });
    await scheduler.load(engine.parse(POLICY), POLICY);
    const key = engine.keys.policy(policySha(POLICY));
    const month = 30 * 86_400_000;
    expect(await engine.redis.pttl(key)).toBeGreaterThan(month - 60_000);
    // weeks later, its TTL nearly run out: the next ticks renew it
    await engine.redis.pexpire(key, 60_000);
    await engine.redis.pexpire(engine.keys.currentPolicy, 60_000);
    offset = 2 * 3_600_000;
    await scheduler.start();
    await eventually('the TTL renewed', async () => (await engine.redis.pttl(key)) > month - 60_000, 10_000);
    expect(await engine.redis.pttl(engine.keys.currentPolicy)).toBeGreaterThan(month - 60_000);
  });
});

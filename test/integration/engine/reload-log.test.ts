import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../helpers/engine.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';

let server: TestRedis;

beforeAll(async () => {
  server = await startTestRedis();
});

afterAll(async () => {
  await server?.stop();
});

const policy = (uptime: string, schedule: string) => `version: 1
windows:
  office:
    target: { workgroups: ["dev-*"] }
    uptime: "${uptime}"
jobs:
  audit:
    schedule: "${schedule}"
    action: allow-list-audit
    target: { workgroups: ["*"] }
  nightly-pause:
    schedule: "0 6 * * 1"
    action: pause
    target: { workgroups: ["dev-*"] }
`;

describe('the "policy loaded" line of a reload', () => {
  it('names the windows and jobs whose definition changed, besides those added and removed', async () => {
    const engine = new Engine(server.url, 'reload-log');
    try {
      const scheduler = engine.scheduler();
      const first = policy('Mon-Fri 07:30-19:30', '0 5 * * *');
      await scheduler.load(engine.parse(first), first);
      const second = policy('Mon-Fri 08:00-18:00', '0 6 * * *');
      await scheduler.load(engine.parse(second), second);
      const [, reload] = engine.lines('policy loaded');
      expect(reload).toMatchObject({ added: [], removed: [], changed: ['audit', 'office'] });
    } finally {
      await engine.close();
    }
  });
});

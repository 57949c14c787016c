import fc from 'fast-check';
import { MockAgent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../../../src/api/index.js';

const agent = new MockAgent();
agent.disableNetConnect();
const origin = 'http://api.fuzz.test';
const pool = agent.get(origin);
const client = new ApiClient({
  baseUrl: origin,
  apiKey: 'fuzz-key',
  bearerToken: 'fuzz-token',
  dispatcher: agent,
});

afterAll(async () => {
  await agent.close();
});

const operations: Array<(c: ApiClient) => Promise<unknown>> = [
  (c) => c.restoreBackup('wg', 'ws', 'bk'),
  (c) => c.deleteBackup('wg', 'ws', 'bk'),
  (c) => c.createDbUser('wg', 'ws', { username: 'u', password: 'p' }),
  (c) => c.updateDbUserPassword('wg', 'ws', { username: 'u', password: 'p' }),
  (c) => c.updateCloudProvider('cp', { name: 'n' }),
  (c) => c.getCloudProvider('cp'),
  (c) => c.upgradeCloudProvider('cp', {}),
  (c) => c.listWorkgroups(),
  (c) => c.listAllowedIps('wg'),
  (c) => c.checkCurrentIp('wg'),
  (c) => c.disableAllowList('wg'),
  (c) => c.listOrgUsers(),
  (c) => c.resumeWorkspace('wg', 'ws'),
  (c) => c.pauseWorkspace('wg', 'ws'),
  (c) => c.deleteDatabase('wg', 'db'),
];

const jsonValue = fc.jsonValue({ maxDepth: 4 });
const envelopeLike = fc.record(
  {
    Error: fc.oneof(fc.boolean(), jsonValue),
    ErrorDetails: fc.oneof(
      fc.array(
        fc.record({ FieldName: fc.string(), Reason: fc.string(), Type: fc.string() }, { requiredKeys: [] }),
      ),
      jsonValue,
    ),
    Message: fc.oneof(fc.string(), jsonValue),
    RequestID: fc.oneof(fc.string(), jsonValue),
    Result: jsonValue,
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  jsonValue.map((v) => JSON.stringify(v)),
  envelopeLike.map((v) => JSON.stringify(v)),
  fc.string(),
  fc.constant(''),
);
const status = fc.constantFrom(200, 201, 204, 400, 401, 404, 429, 500, 502, 503);

describe('arbitrary response bodies', () => {
  it('yield a parsed result or an ApiError, never another exception', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: operations.length - 1 }), status, body, async (op, code, text) => {
        pool.intercept({ path: () => true, method: () => true }).reply(code === 204 ? 200 : code, text);
        const outcome = await (operations[op] as (c: ApiClient) => Promise<unknown>)(client).then(
          () => 'resolved',
          (error: unknown) => error,
        );
        if (outcome !== 'resolved') {
          expect(outcome).toBeInstanceOf(ApiError);
          expect(typeof (outcome as ApiError).retryable).toBe('boolean');
        }
      }),
      { numRuns: 2000 },
    );
  });
});

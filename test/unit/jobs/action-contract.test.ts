import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, type ScriptedServer, startScriptedServer } from '../../../bench/harness/scripted-server.js';
import { ApiClient } from '../../../src/api/index.js';
import type { PlanContext, ReadOnlyApi } from '../../../src/engine/index.js';

let server: ScriptedServer;
let client: ApiClient;

beforeAll(async () => {
  server = await startScriptedServer();
  server.replyJson(400, failure('Bad-Request', 'refused by the test'));
  client = new ApiClient({ baseUrl: server.url, apiKey: 'test-key-0123456789', bearerToken: 'test-bearer' });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

/** One call of each operation a plan's client has; the Record type makes the list complete. */
const reads: Record<keyof ReadOnlyApi, (api: ReadOnlyApi) => Promise<unknown>> = {
  listWorkgroups: (api) => api.listWorkgroups(),
  listAllowedIps: (api) => api.listAllowedIps('wg1'),
  checkCurrentIp: (api) => api.checkCurrentIp('wg1'),
  getCloudProvider: (api) => api.getCloudProvider('cp1'),
  listOrgUsers: (api) => api.listOrgUsers(),
};

describe("a plan's client", () => {
  it.each(Object.entries(reads))('%s only reads: the client sends it as GET', async (_, call) => {
    server.requests.length = 0;
    await expect(call(client)).rejects.toThrow();
    expect(server.requests.map((request) => request.method)).toEqual(['GET']);
  });

  it('has none of the other operations, so a plan that writes does not compile', () => {
    const writes = Object.getOwnPropertyNames(ApiClient.prototype).filter(
      (name) => name !== 'constructor' && name !== 'close' && !(name in reads),
    );
    expect(writes).toHaveLength(10);
    // @ts-expect-error: pausing is a write, absent from the read-only client
    const pause: ReadOnlyApi['pauseWorkspace'] = client.pauseWorkspace;
    expect(pause).toBeTypeOf('function');
  });
});

describe("a plan's ports", () => {
  it('only look: a plan that writes a file or delivers a secret does not compile', () => {
    // ports that can only look are all a plan needs
    const plan: Pick<PlanContext, 'files' | 'secretSinks'> = {
      files: { exists: async () => false },
      secretSinks: { checkFile: async () => undefined },
    };
    // @ts-expect-error: a plan writes no file
    expect(plan.files.writeAtomically).toBeUndefined();
    // @ts-expect-error: a plan delivers no secret
    expect(plan.secretSinks.appendToFile).toBeUndefined();
    // @ts-expect-error: a plan runs no command
    expect(plan.secretSinks.runCommand).toBeUndefined();
  });
});

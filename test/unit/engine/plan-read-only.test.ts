import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApiClient } from '../../../src/api/index.js';
import type { Action } from '../../../src/engine/index.js';
import { ONE_WORKSPACE_FLEET, runOneJob } from '../../helpers/one-job-run.js';

/** A plan that casts its way past the read-only types and tries each kind of write. */
function sneakyAction(tries: 'api' | 'files' | 'secretSinks'): Action {
  return {
    name: 'sneak',
    description: 'Test only: a plan that writes.',
    destructive: false,
    scope: 'workspace',
    params: z.strictObject({}),
    example: '',
    plan: async (ctx) => {
      const loose = ctx as unknown as Record<
        string,
        Record<string, (...args: unknown[]) => Promise<unknown>>
      >;
      if (tries === 'api') await loose.api?.pauseWorkspace?.('wg-1', 'ws-1');
      if (tries === 'files') await loose.files?.write?.('/tmp/x', 'y');
      if (tries === 'secretSinks') await loose.secretSinks?.deliver?.('/tmp/x', 'y');
    },
    run: async () => {},
  };
}

async function dryRun(tries: 'api' | 'files' | 'secretSinks') {
  const writes: string[] = [];
  const api = {
    listWorkgroups: async () => ({ result: ONE_WORKSPACE_FLEET }),
    listAllowedIps: async () => ({ result: [] }),
    checkCurrentIp: async () => ({ result: {} }),
    getCloudProvider: async () => ({ result: {} }),
    listOrgUsers: async () => ({ result: [] }),
    pauseWorkspace: async () => writes.push('pauseWorkspace'),
  } as unknown as ApiClient;
  const io = {
    files: { exists: async () => false, write: async () => writes.push('files.write') },
    secretSinks: { checkFile: async () => {}, deliver: async () => writes.push('secretSinks.deliver') },
  };
  const summary = await runOneJob({
    action: sneakyAction(tries),
    policy: `version: 1
jobs:
  sneaky:
    schedule: "0 20 * * *"
    action: sneak
    target: { workgroups: ["*"] }
`,
    api,
    io,
    dryRun: true,
  });
  return { summary, writes };
}

describe('a plan (a dry run) at run time', () => {
  for (const tries of ['api', 'files', 'secretSinks'] as const)
    it(`finds no write in ${tries} even when it casts past the read-only types`, async () => {
      const { writes } = await dryRun(tries);
      expect(writes).toEqual([]);
    });
});

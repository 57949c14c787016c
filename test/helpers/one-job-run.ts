import type { ApiClient, Workgroup } from '../../src/api/index.js';
import { type Action, executeRun, MemoryCheckpointStore, type RunSummary } from '../../src/engine/index.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { createActionCatalog, parsePolicy } from '../../src/policy/index.js';

/** One workgroup with one Active workspace: `dev-core/api`. */
export const ONE_WORKSPACE_FLEET: Workgroup[] = [
  {
    workgroup_id: 'wg-1',
    name: 'dev-core',
    workspaces: [{ workspace_id: 'ws-1', name: 'api', workgroup_id: 'wg-1', status: 'Active' }],
  } as Workgroup,
];

/**
 * One manual run, in process, of the one job of `policy` (YAML whose only action is `action`),
 * with the engine's defaults: in-memory checkpoints, no Redis. `api` defaults to a client that
 * lists ONE_WORKSPACE_FLEET and does nothing else.
 */
export async function runOneJob(options: {
  action: Action;
  policy: string;
  env?: Record<string, string>;
  api?: ApiClient;
  io?: unknown;
  log?: Logger;
  dryRun?: boolean;
}): Promise<RunSummary> {
  const policy = parsePolicy(options.policy, 'test.yaml', {
    registry: createActionCatalog([options.action]),
    env: options.env ?? {},
  });
  const job = policy.jobs[0];
  if (!job) throw new Error('runOneJob: the policy has no job');
  return executeRun(
    {
      api:
        options.api ??
        ({ listWorkgroups: async () => ({ result: ONE_WORKSPACE_FLEET }) } as unknown as ApiClient),
      io: (options.io ?? {}) as never,
      actions: new Map([[options.action.name, options.action]]),
      checkpoints: new MemoryCheckpointStore(),
      log: options.log ?? createLogger({ level: 'silent' }),
      signal: new AbortController().signal,
      pollIntervalMs: 1_000,
    },
    { runId: `${job.name}@1`, job, trigger: 'manual', dryRun: options.dryRun ?? false },
  );
}

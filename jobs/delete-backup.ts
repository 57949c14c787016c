import { z } from 'zod';
import { ApiError, type Workgroup, type Workspace } from '../src/api/index.js';
import type { Action, PlanContext, TargetRef } from '../src/engine/index.js';
import { findWorkgroup, findWorkspace, type Named } from './support/by-name-or-id.js';

const params = z.strictObject({
  workgroup: z.string().min(1).meta({ description: 'The workgroup, by name or id.' }),
  workspace: z.string().min(1).meta({ description: 'The workspace the backups belong to, by name or id.' }),
  backupIds: z.array(z.string().min(1)).min(1).meta({ description: 'The backups to delete, by backup_id.' }),
});
type Params = z.output<typeof params>;

/** Path parameters the API names in a Not-Found that is about the workspace, not the backup. */
const PARENT_FIELDS = new Set(['workgroupID', 'workspaceID', 'path']);

/**
 * Whether the API answered that the backup does not exist. The API lists no backups, so this
 * answer to the delete itself is the only sign that an earlier run (or attempt) deleted it.
 */
function isBackupGone(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    error.status === 404 &&
    !error.details.some((detail) => PARENT_FIELDS.has(detail.FieldName ?? ''))
  );
}

function resolve(ctx: PlanContext, { workgroup, workspace, backupIds }: Params) {
  const wg = findWorkgroup(ctx.fleet.workgroups, workgroup);
  const ws = findWorkspace(wg, workspace);
  return { wg, ws, backupIds: [...new Set(backupIds)] };
}

function backupRef(wg: Named<Workgroup>, ws: Named<Workspace>) {
  return (backupId: string): TargetRef => ({
    key: `${wg.id}/${ws.id}/${backupId}`,
    workgroupId: wg.id,
    workgroupName: wg.name,
    workspaceId: ws.id,
    workspaceName: ws.name,
  });
}

/** Deletes named backups of one workspace; one already gone is skipped. */
export const deleteBackup: Action<typeof params> = {
  name: 'delete-backup',
  description: 'Delete the listed backups of one workspace; a backup already gone is skipped.',
  destructive: true,
  stopAfter: { failures: 1 },
  scope: 'none',
  params,
  example: `version: 1
jobs:
  drop-old-backups:
    description: Delete two backups of the search workspace that are no longer needed
    schedule: "0 2 * * 0"
    action: delete-backup
    confirm: true
    with:
      workgroup: prod-core
      workspace: search
      backupIds: [bk-89511a60, bk-0c3d27f1]
`,

  async plan(ctx, options: Params) {
    const { wg, ws, backupIds } = resolve(ctx, options);
    await ctx.forEachTarget(backupIds, backupRef(wg, ws), async () => ({
      outcome: 'planned',
      reason: 'would delete it, if it still exists (the API lists no backups: that shows only when deleting)',
    }));
  },

  async run(ctx, options: Params) {
    const { wg, ws, backupIds } = resolve(ctx, options);
    await ctx.forEachTarget(backupIds, backupRef(wg, ws), async (backupId, step) => {
      try {
        await ctx.api.deleteBackup(wg.id, ws.id, backupId, { signal: step.signal });
      } catch (error) {
        if (!isBackupGone(error)) throw error;
        return { outcome: 'skipped', reason: 'already deleted (the API answers Not-Found)' };
      }
      return { outcome: 'succeeded' };
    });
  },
};

import { z } from 'zod';
import { badRequest, notFound } from '../envelope.js';
import type { SimBackup, SimWorkspace } from '../state.js';
import { parseBody } from '../validation.js';
import { type OperationHandler, ok, requireWorkspace, type SimContext } from './context.js';

const BackupBodySchema = z.object({ backup_id: z.string().min(1) });

function requireBackup(ctx: SimContext, ws: SimWorkspace, backupId: string): SimBackup {
  const backup = ctx.store.backups.get(backupId);
  if (backup?.workspace_id !== ws.workspace_id) {
    throw notFound('backup_id', `backup "${backupId}" does not exist for workspace "${ws.workspace_id}"`);
  }
  return backup;
}

/** Restoring replaces the graph, so the workspace must be settled (Active or Stopped) first. */
export const restoreBackup: OperationHandler = (ctx, call) => {
  const { backup_id } = parseBody(BackupBodySchema, call.body);
  const ws = requireWorkspace(ctx, call);
  const backup = requireBackup(ctx, ws, backup_id);
  if (ws.status !== 'Active' && ws.status !== 'Stopped') {
    throw badRequest(
      'workspaceID',
      `workspace "${ws.workspace_id}" is ${ws.status}; restore needs Active or Stopped`,
    );
  }
  ctx.lifecycle.restore(ws, backup);
  return ok('Restore started', `restoring workspace ${ws.workspace_id} from backup ${backup_id}`);
};

export const deleteBackup: OperationHandler = (ctx, call) => {
  const { backup_id } = parseBody(BackupBodySchema, call.body);
  const ws = requireWorkspace(ctx, call);
  requireBackup(ctx, ws, backup_id);
  ctx.store.removeBackup(backup_id);
  return ok('Backup deleted', `backup ${backup_id} deleted`);
};

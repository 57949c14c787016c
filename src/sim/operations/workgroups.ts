import { badRequest, notFound } from '../envelope.js';
import { databaseIdOf, type OperationHandler, ok, requireWorkgroup } from './context.js';

export const listWorkgroups: OperationHandler = (ctx, call) => ({
  message: 'Succeeded',
  resultJson: ctx.cache.workgroupsJson(call.ip),
});

/** The spec leaves dependents open; a database still serving workspaces is refused. */
export const deleteDatabase: OperationHandler = (ctx, call) => {
  const wg = requireWorkgroup(ctx, call);
  const databaseId = databaseIdOf(call);
  const db = ctx.store.databases.get(databaseId);
  if (db?.workgroup_id !== wg.workgroup_id) {
    throw notFound('databaseID', `database "${databaseId}" does not exist in workgroup "${wg.workgroup_id}"`);
  }
  const attached = ctx.store.state.workspaces.filter((ws) => ws.database_id === databaseId);
  if (attached.length > 0) {
    throw badRequest(
      'databaseID',
      `database "${databaseId}" still has ${attached.length} workspace(s): ${attached.map((ws) => ws.workspace_id).join(', ')}`,
    );
  }
  ctx.store.removeDatabase(databaseId);
  return ok('Database deleted', `database ${databaseId} deleted`);
};

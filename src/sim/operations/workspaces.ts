import { badRequest } from '../envelope.js';
import { type OperationHandler, ok, requireWorkspace } from './context.js';

/** Not idempotent on purpose: a client must read the status first, as against the real service. */
export const pauseWorkspace: OperationHandler = (ctx, call) => {
  const ws = requireWorkspace(ctx, call);
  if (ws.status !== 'Active') {
    throw badRequest('workspaceID', `workspace "${ws.workspace_id}" is ${ws.status}; pause needs Active`);
  }
  ctx.lifecycle.pause(ws);
  return ok('Pause started', `workspace ${ws.workspace_id} is stopping`);
};

export const resumeWorkspace: OperationHandler = (ctx, call) => {
  const ws = requireWorkspace(ctx, call);
  if (ws.status !== 'Stopped') {
    throw badRequest('workspaceID', `workspace "${ws.workspace_id}" is ${ws.status}; resume needs Stopped`);
  }
  ctx.lifecycle.resume(ws);
  return ok('Resume started', `workspace ${ws.workspace_id} is resuming`);
};

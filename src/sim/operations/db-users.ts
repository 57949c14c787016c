import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { badRequest, notFound } from '../envelope.js';
import { isoTime } from '../iso-time.js';
import { renderDbUser } from '../render.js';
import { parseBody } from '../validation.js';
import { type OperationHandler, ok, requireWorkspace } from './context.js';

/** The spec marks neither field required; a user cannot exist without both, so both are. */
const CredentialsSchema = z.object({
  username: z.string().min(1).max(64),
  password: z.string().min(8).max(128),
});

export const createDbUser: OperationHandler = (ctx, call) => {
  const { username } = parseBody(CredentialsSchema, call.body);
  const ws = requireWorkspace(ctx, call);
  if (ctx.store.dbUsersOf(ws.workspace_id).some((user) => user.username === username)) {
    throw badRequest('username', `user "${username}" already exists in workspace "${ws.workspace_id}"`);
  }
  const now = isoTime(ctx.clock.now());
  const { org_id } = ctx.store.state.org;
  const user = {
    id: `dbu-${randomBytes(3).toString('hex')}`,
    idpUserID: `idp-${randomBytes(6).toString('hex')}`,
    username,
    workgroup_id: ws.workgroup_id,
    workspace_id: ws.workspace_id,
    created: now,
    updated: now,
    description: '',
    email: '',
    enabled: true,
    firstName: '',
    lastName: '',
    path: `/${org_id}/${ws.workgroup_id}/${ws.workspace_id}`,
    role: 'reader',
    tenantID: org_id,
    trn: `trn:svc:${org_id}:workspace/${ws.workspace_id}/dbuser/${username}`,
    metadata: { created_by: 'api-key' },
    password_version: 1,
    password_set_at: now,
  };
  ctx.store.addDbUser(user);
  return ok('User created', renderDbUser(user));
};

export const updateDbUserPassword: OperationHandler = (ctx, call) => {
  const { username } = parseBody(CredentialsSchema, call.body);
  const ws = requireWorkspace(ctx, call);
  const user = ctx.store.dbUsersOf(ws.workspace_id).find((candidate) => candidate.username === username);
  if (!user)
    throw notFound('username', `user "${username}" does not exist in workspace "${ws.workspace_id}"`);
  const now = isoTime(ctx.clock.now());
  user.password_version += 1;
  user.password_set_at = now;
  user.updated = now;
  ctx.store.changed();
  return ok('Password updated', `password of ${username} updated`);
};

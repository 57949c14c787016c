import { renderOrgUsers } from '../render.js';
import type { OperationHandler } from './context.js';

/** The one operation answered without the envelope. */
export const listOrgUsers: OperationHandler = (ctx) => {
  const { orgUsers, settings } = ctx.store.state;
  return { bareJson: JSON.stringify(renderOrgUsers(orgUsers, settings.org_users_shape)) };
};

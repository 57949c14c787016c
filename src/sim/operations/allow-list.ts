import { normalizeIp } from '../allow-list.js';
import { renderCurrentIp } from '../render.js';
import { type OperationHandler, ok, requireWorkgroup } from './context.js';

export const listAllowedIps: OperationHandler = (ctx, call) => ({
  message: 'Succeeded',
  resultJson: ctx.cache.allowListJson(requireWorkgroup(ctx, call)),
});

export const checkCurrentIp: OperationHandler = (ctx, call) => {
  const wg = requireWorkgroup(ctx, call);
  return ok('Succeeded', renderCurrentIp(ctx.cache.callerAllowed(wg, call.ip), normalizeIp(call.ip)));
};

/** Idempotent: disabling an already disabled allow list succeeds too. */
export const disableAllowList: OperationHandler = (ctx, call) => {
  const wg = requireWorkgroup(ctx, call);
  if (wg.enable_allow_list) {
    wg.enable_allow_list = false;
    ctx.store.changed();
  }
  return ok('Allow list disabled', `allow list of workgroup ${wg.workgroup_id} disabled`);
};

import { z } from 'zod';
import { NODE_GROUP_NAMES } from '../../api/index.js';
import { badRequest } from '../envelope.js';
import { isoTime } from '../iso-time.js';
import { mergeNodeGroups } from '../lifecycle.js';
import { renderCloudProvider } from '../render.js';
import { UpgradeRequestSchema } from '../state.js';
import { CLOUD_PROVIDER_STATUS } from '../status.js';
import { parseBody } from '../validation.js';
import { type OperationHandler, ok, requireCloudProvider } from './context.js';

const UpdateBodySchema = z.object({
  name: z.string().min(1).max(128).optional(),
  version: z.string().min(1).max(64).optional(),
});

export const getCloudProvider: OperationHandler = (ctx, call) =>
  ok('Succeeded', renderCloudProvider(requireCloudProvider(ctx, call)));

/** Renames or records a version; what is deployed does not change (spec rule 3). */
export const updateCloudProvider: OperationHandler = (ctx, call) => {
  const update = parseBody(UpdateBodySchema, call.body);
  const cp = requireCloudProvider(ctx, call);
  if (update.name !== undefined) cp.name = update.name;
  if (update.version !== undefined) cp.version = update.version;
  if (update.name !== undefined || update.version !== undefined) {
    cp.updated_at = isoTime(ctx.clock.now());
    cp.version_number += 1;
    ctx.store.changed();
  }
  return ok('Cloud provider updated', renderCloudProvider(cp));
};

export const upgradeCloudProvider: OperationHandler = (ctx, call) => {
  const request = parseBody(UpgradeRequestSchema, call.body);
  const cp = requireCloudProvider(ctx, call);
  if (cp.status === CLOUD_PROVIDER_STATUS.upgrading) {
    throw badRequest('cloudProviderID', `cloud provider "${cp.id}" is already Upgrading`);
  }
  // Sizes are checked after merging: a request may move only one end of a group's range.
  const merged = mergeNodeGroups(cp.node_group_config, request.node_group_config);
  for (const name of NODE_GROUP_NAMES) {
    const group = merged[name];
    if (
      group &&
      typeof group.min_size === 'number' &&
      typeof group.max_size === 'number' &&
      group.min_size > group.max_size
    ) {
      throw badRequest(
        `node_group_config.${name}.min_size`,
        `node_group_config.${name}: min_size ${group.min_size} exceeds max_size ${group.max_size}`,
      );
    }
  }
  ctx.lifecycle.upgrade(cp, request);
  return ok('Upgrade started', `upgrading cloud provider ${cp.id}`);
};

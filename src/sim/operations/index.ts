import { checkCurrentIp, disableAllowList, listAllowedIps } from './allow-list.js';
import { deleteBackup, restoreBackup } from './backups.js';
import { getCloudProvider, updateCloudProvider, upgradeCloudProvider } from './cloud-providers.js';
import type { OperationHandlers } from './context.js';
import { createDbUser, updateDbUserPassword } from './db-users.js';
import { listOrgUsers } from './org-users.js';
import { deleteDatabase, listWorkgroups } from './workgroups.js';
import { pauseWorkspace, resumeWorkspace } from './workspaces.js';

export type { OperationCall, OperationHandler, OperationResult, SimContext } from './context.js';

export const HANDLERS: OperationHandlers = {
  restoreBackup,
  deleteBackup,
  createDbUser,
  updateDbUserPassword,
  updateCloudProvider,
  getCloudProvider,
  upgradeCloudProvider,
  listWorkgroups,
  listAllowedIps,
  checkCurrentIp,
  disableAllowList,
  listOrgUsers,
  resumeWorkspace,
  pauseWorkspace,
  deleteDatabase,
};

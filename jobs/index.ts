import { type Action, createActionCatalog } from '../src/engine/index.js';
import { allowListAudit } from './allow-list-audit.js';
import { checkIp } from './check-ip.js';
import { cloudProviderReport } from './cloud-provider-report.js';
import { createDbUser } from './create-db-user.js';
import { deleteBackup } from './delete-backup.js';
import { deleteDatabase } from './delete-database.js';
import { disableAllowList } from './disable-allow-list.js';
import { inventory } from './inventory.js';
import { orgUserReview } from './org-user-review.js';
import { pause } from './pause.js';
import { reconcileWindow } from './reconcile-window.js';
import { restoreDrill } from './restore-drill.js';
import { resume } from './resume.js';
import { rotateDbPassword } from './rotate-db-password.js';
import { updateCloudProvider } from './update-cloud-provider.js';
import { upgradeCloudProvider } from './upgrade-cloud-provider.js';

/**
 * The actions a job may name, by name: the policy validates `action:` and `with:` against them.
 * Add an action by adding its module here; a name given twice throws.
 */
export const actionRegistry: ReadonlyMap<string, Action> = createActionCatalog([
  pause,
  resume,
  allowListAudit,
  checkIp,
  disableAllowList,
  createDbUser,
  rotateDbPassword,
  deleteBackup,
  deleteDatabase,
  restoreDrill,
  inventory,
  cloudProviderReport,
  updateCloudProvider,
  upgradeCloudProvider,
  orgUserReview,
]);

/** Every action the engine runs: the policy's, plus the reconciliation of windows, which no job names. */
export const actions: ReadonlyMap<string, Action> = createActionCatalog([
  ...actionRegistry.values(),
  reconcileWindow,
]);

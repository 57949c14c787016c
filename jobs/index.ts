import type { Action } from '../src/engine/index.js';
import { type ActionRegistry, createActionRegistry } from '../src/policy/index.js';
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

const all: readonly Action[] = [
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
] as readonly Action[];

/** The actions as the policy layer sees them (name, schema, scope, example); a name given twice throws. */
export const actionRegistry: ActionRegistry = createActionRegistry(all);

/**
 * Every action, by name, as the engine runs them: the policy's, plus the reconciliation of windows,
 * which no job names (windows are their own section). Add an action by adding its module to `all`.
 */
export const actions: ReadonlyMap<string, Action> = new Map(
  [...all, reconcileWindow as Action].map((action) => [action.name, action]),
);

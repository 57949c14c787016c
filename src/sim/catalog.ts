/** The 15 operations of the management API, named like the client's methods. */
export const OPERATION_NAMES = [
  'restoreBackup',
  'deleteBackup',
  'createDbUser',
  'updateDbUserPassword',
  'updateCloudProvider',
  'getCloudProvider',
  'upgradeCloudProvider',
  'listWorkgroups',
  'listAllowedIps',
  'checkCurrentIp',
  'disableAllowList',
  'listOrgUsers',
  'resumeWorkspace',
  'pauseWorkspace',
  'deleteDatabase',
] as const;
export type OperationName = (typeof OPERATION_NAMES)[number];

/** `api-key`: the `x-api-key` header; `bearer`: `Authorization: Bearer <token>` (list org users only). */
export type AuthScheme = 'api-key' | 'bearer';

export interface OperationRoute {
  name: OperationName;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Fastify route syntax; parameter names are the spec's. */
  url: string;
  auth: AuthScheme;
}

const WORKGROUP = '/controller/v4/v2/workgroups/:workgroupID';
const WORKSPACE = `${WORKGROUP}/workspaces/:workspaceID`;
const CLOUD_PROVIDER = '/controller/v4/v2/cloud-providers/:cloudProviderID';

export const OPERATION_ROUTES: readonly OperationRoute[] = [
  { name: 'restoreBackup', method: 'POST', url: `${WORKSPACE}/backups/restore`, auth: 'api-key' },
  { name: 'deleteBackup', method: 'DELETE', url: `${WORKSPACE}/backups`, auth: 'api-key' },
  { name: 'createDbUser', method: 'POST', url: `${WORKSPACE}/dbuser`, auth: 'api-key' },
  { name: 'updateDbUserPassword', method: 'PUT', url: `${WORKSPACE}/dbuser`, auth: 'api-key' },
  { name: 'updateCloudProvider', method: 'PUT', url: CLOUD_PROVIDER, auth: 'api-key' },
  { name: 'getCloudProvider', method: 'GET', url: CLOUD_PROVIDER, auth: 'api-key' },
  { name: 'upgradeCloudProvider', method: 'PUT', url: `${CLOUD_PROVIDER}/upgrade`, auth: 'api-key' },
  { name: 'listWorkgroups', method: 'GET', url: '/controller/v4/v2/workgroups', auth: 'api-key' },
  { name: 'listAllowedIps', method: 'GET', url: `${WORKGROUP}/allow_list`, auth: 'api-key' },
  { name: 'checkCurrentIp', method: 'GET', url: `${WORKGROUP}/allow_list/current`, auth: 'api-key' },
  { name: 'disableAllowList', method: 'PUT', url: `${WORKGROUP}/allow_list/disable`, auth: 'api-key' },
  { name: 'listOrgUsers', method: 'GET', url: '/users', auth: 'bearer' },
  { name: 'resumeWorkspace', method: 'POST', url: `${WORKSPACE}/resume`, auth: 'api-key' },
  { name: 'pauseWorkspace', method: 'POST', url: `${WORKSPACE}/pause`, auth: 'api-key' },
  { name: 'deleteDatabase', method: 'DELETE', url: `${WORKGROUP}/databases/:databaseID`, auth: 'api-key' },
];

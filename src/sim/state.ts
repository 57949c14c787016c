import { z } from 'zod';
import {
  AllowListEntrySchema,
  CLUSTER_LOG_TYPES,
  CloudProviderSchema,
  DatabaseSchema,
  DbUserSchema,
  OrgUserSchema,
  WorkgroupSchema,
  WorkspaceSchema,
} from '../api/index.js';
import { parseCidr } from './allow-list.js';

/**
 * The simulator's whole state: what `GET /_sim/state` returns and what `--state` loads.
 *
 * Resources are stored normalised, one array per kind, in the API's own field names. Fields
 * the API shows but that follow from a relation (a workspace's `workgroup_name`, a
 * workgroup's `cloud_provider_status`, every `org_id`) are left out here and filled in when
 * a response is rendered, so a rename or a status change shows everywhere at once.
 *
 * Objects are strict so a typo in a hand-written state file is reported, not ignored.
 */
export const STATE_FORMAT = 'nightshift-sim-state/1';

const id = z.string().min(1);
const count = z.number().int().min(0);
const instant = z.iso.datetime();

export const SimOrgSchema = z.strictObject({ org_id: id, org_name: z.string() });

export const SimCloudProviderSchema = z.strictObject({
  ...CloudProviderSchema.shape,
  id,
  name: z.string(),
  status: z.string(),
  version_number: count,
});
export type SimCloudProvider = z.infer<typeof SimCloudProviderSchema>;

const cidr = z.string().superRefine((value, ctx) => {
  try {
    parseCidr(value);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

export const SimAllowListEntrySchema = z.strictObject({ ...AllowListEntrySchema.shape, id, cidr });
export type SimAllowListEntry = z.infer<typeof SimAllowListEntrySchema>;

export const SimWorkgroupSchema = z.strictObject({
  ...WorkgroupSchema.omit({
    cloud_provider_name: true,
    cloud_provider_status: true,
    cloud_provider_type: true,
    is_current_ip_allowed: true,
    org_id: true,
    org_name: true,
    svc_databases: true,
    workspaces: true,
  }).shape,
  workgroup_id: id,
  name: z.string(),
  cloud_provider_id: id,
  enable_allow_list: z.boolean(),
  allow_list: z.array(SimAllowListEntrySchema),
});
export type SimWorkgroup = z.infer<typeof SimWorkgroupSchema>;

export const SimDatabaseSchema = z.strictObject({
  ...DatabaseSchema.omit({ org_id: true, org_name: true, region: true, workspaces: true }).shape,
  database_id: id,
  workgroup_id: id,
  name: z.string(),
});
export type SimDatabase = z.infer<typeof SimDatabaseSchema>;

export const SimWorkspaceSchema = z.strictObject({
  ...WorkspaceSchema.omit({
    workgroup_name: true,
    database_name: true,
    cloud_provider_id: true,
    cloud_provider_name: true,
    cloud_provider_short_id: true,
    org_id: true,
    org_name: true,
    region: true,
  }).shape,
  workspace_id: id,
  name: z.string(),
  workgroup_id: id,
  database_id: id,
  status: z.string(),
  display_status: z.string(),
  condition_type: z.string(),
  vertex_count: count,
  edge_count: count,
  version_number: count,
  last_modified_time: z.string(),
});
export type SimWorkspace = z.infer<typeof SimWorkspaceSchema>;

/** The spec shows nothing of a backup but its id; the counts are what a restore brings back. */
export const SimBackupSchema = z.strictObject({
  backup_id: id,
  workgroup_id: id,
  workspace_id: id,
  created_at: z.string(),
  vertex_count: count,
  edge_count: count,
  size_bytes: count,
});
export type SimBackup = z.infer<typeof SimBackupSchema>;

/** An in-database user. The password itself is never kept, only when and how often it was set. */
export const SimDbUserSchema = z.strictObject({
  ...DbUserSchema.omit({ metadata: true }).shape,
  id,
  username: z.string().min(1),
  workgroup_id: id,
  workspace_id: id,
  metadata: z.record(z.string(), z.unknown()),
  password_version: z.number().int().min(1),
  password_set_at: z.string(),
});
export type SimDbUser = z.infer<typeof SimDbUserSchema>;

export const SimOrgUserSchema = z.strictObject({ ...OrgUserSchema.shape, id, username: z.string() });
export type SimOrgUser = z.infer<typeof SimOrgUserSchema>;

const nodeGroupRequest = z.object({
  min_size: count.optional(),
  max_size: count.optional(),
  overprovisioning_factor: count.optional(),
});

/** Body of upgrade a cloud provider, as validated; kept on a pending upgrade until it completes. */
export const UpgradeRequestSchema = z.object({
  cluster_enabled_log_types: z.array(z.enum(CLUSTER_LOG_TYPES)).optional(),
  components: z.array(z.object({ name: z.string().min(1), version: z.string().min(1) })).optional(),
  node_group_config: z
    .object({
      ng_16: nodeGroupRequest.optional(),
      ng_32: nodeGroupRequest.optional(),
      ng_48: nodeGroupRequest.optional(),
      ng_64: nodeGroupRequest.optional(),
      ng_system: nodeGroupRequest.optional(),
      prefetch_image_list: z.array(z.string().min(1)).optional(),
    })
    .optional(),
});
export type UpgradeRequest = z.infer<typeof UpgradeRequestSchema>;

const timing = { id, started_at: instant, completes_at: instant };

/** A transition under way. Persisted so a saved state resumes its timers when loaded. */
export const TransitionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('pause'), workspace_id: id, ...timing }),
  z.strictObject({ kind: z.literal('resume'), workspace_id: id, ...timing }),
  z.strictObject({
    kind: z.literal('restore'),
    workspace_id: id,
    backup_id: id,
    vertex_count: count,
    edge_count: count,
    ...timing,
  }),
  z.strictObject({
    kind: z.literal('upgrade'),
    cloud_provider_id: id,
    request: UpgradeRequestSchema,
    ...timing,
  }),
]);
export type Transition = z.infer<typeof TransitionSchema>;

export const ORG_USERS_SHAPES = ['auto', 'array', 'object'] as const;
/** `auto`: an array when there are several users, the one user's object when there is exactly one. */
export type OrgUsersShape = (typeof ORG_USERS_SHAPES)[number];

export const SimSettingsSchema = z.strictObject({
  org_users_shape: z.enum(ORG_USERS_SHAPES).default('auto'),
});

const StateObjectSchema = z.strictObject({
  format: z.literal(STATE_FORMAT),
  org: SimOrgSchema,
  settings: SimSettingsSchema.default({ org_users_shape: 'auto' }),
  cloudProviders: z.array(SimCloudProviderSchema),
  workgroups: z.array(SimWorkgroupSchema),
  databases: z.array(SimDatabaseSchema),
  workspaces: z.array(SimWorkspaceSchema),
  backups: z.array(SimBackupSchema),
  dbUsers: z.array(SimDbUserSchema),
  orgUsers: z.array(SimOrgUserSchema),
  transitions: z.array(TransitionSchema).default([]),
});
export type SimState = z.infer<typeof StateObjectSchema>;

export const SimStateSchema = StateObjectSchema.superRefine(checkReferences);

/** Ids must be unique and every relation must point at something that exists. */
function checkReferences(state: SimState, ctx: z.RefinementCtx): void {
  const report = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path, message });
  const index = <T>(key: keyof SimState, items: T[], idOf: (item: T) => string, field: string) => {
    const byId = new Map<string, T>();
    for (const [i, item] of items.entries()) {
      const itemId = idOf(item);
      if (byId.has(itemId)) report([key, i, field], `duplicate id "${itemId}"`);
      byId.set(itemId, item);
    }
    return byId;
  };
  const providers = index('cloudProviders', state.cloudProviders, (p) => p.id, 'id');
  const workgroups = index('workgroups', state.workgroups, (w) => w.workgroup_id, 'workgroup_id');
  const databases = index('databases', state.databases, (d) => d.database_id, 'database_id');
  const workspaces = index('workspaces', state.workspaces, (w) => w.workspace_id, 'workspace_id');
  index('backups', state.backups, (b) => b.backup_id, 'backup_id');
  index('orgUsers', state.orgUsers, (u) => u.id, 'id');
  index('dbUsers', state.dbUsers, (u) => `${u.workspace_id}/${u.username}`, 'username');

  for (const [i, wg] of state.workgroups.entries()) {
    if (!providers.has(wg.cloud_provider_id)) {
      report(['workgroups', i, 'cloud_provider_id'], `no cloud provider "${wg.cloud_provider_id}"`);
    }
  }
  for (const [i, db] of state.databases.entries()) {
    if (!workgroups.has(db.workgroup_id))
      report(['databases', i, 'workgroup_id'], `no workgroup "${db.workgroup_id}"`);
  }
  for (const [i, ws] of state.workspaces.entries()) {
    if (!workgroups.has(ws.workgroup_id))
      report(['workspaces', i, 'workgroup_id'], `no workgroup "${ws.workgroup_id}"`);
    const db = databases.get(ws.database_id);
    if (db?.workgroup_id !== ws.workgroup_id) {
      report(
        ['workspaces', i, 'database_id'],
        `no database "${ws.database_id}" in workgroup "${ws.workgroup_id}"`,
      );
    }
  }
  const checkWorkspace = (
    key: 'backups' | 'dbUsers',
    i: number,
    workgroupId: string,
    workspaceId: string,
  ) => {
    if (workspaces.get(workspaceId)?.workgroup_id !== workgroupId) {
      report([key, i, 'workspace_id'], `no workspace "${workspaceId}" in workgroup "${workgroupId}"`);
    }
  };
  for (const [i, b] of state.backups.entries()) checkWorkspace('backups', i, b.workgroup_id, b.workspace_id);
  for (const [i, u] of state.dbUsers.entries()) checkWorkspace('dbUsers', i, u.workgroup_id, u.workspace_id);
  for (const [i, t] of state.transitions.entries()) {
    if (t.kind === 'upgrade') {
      if (!providers.has(t.cloud_provider_id)) {
        report(['transitions', i, 'cloud_provider_id'], `no cloud provider "${t.cloud_provider_id}"`);
      }
    } else if (!workspaces.has(t.workspace_id)) {
      report(['transitions', i, 'workspace_id'], `no workspace "${t.workspace_id}"`);
    }
  }
}

import { z } from 'zod';

/**
 * Schemas for every resource of the management API (../shared/spec/management-api.md).
 *
 * Every documented field is optional and may be null, and unknown fields are kept
 * (`looseObject`): the spec marks almost nothing required and a new server field must never
 * break a nightly run. Fields the spec marks required stay required.
 */

const opt = <T extends z.ZodType>(schema: T) => schema.nullish();
const str = opt(z.string());
const int = opt(z.number());
const bool = opt(z.boolean());
const strList = opt(z.array(z.string()));

/** The `Type` values the spec lists for an ErrorDetails entry. */
export const API_ERROR_TYPES = [
  'Internal-Error',
  'Bad-Request',
  'Not-Found',
  'Forbidden',
  'Unauthorized',
  'API-Disabled',
  'Quota-Exceed',
  'Unknown',
] as const;
export type ApiErrorType = (typeof API_ERROR_TYPES)[number];

export const ErrorDetailSchema = z.looseObject({
  FieldName: str,
  Reason: str,
  Type: str,
});
export type ErrorDetail = z.infer<typeof ErrorDetailSchema>;

/** The envelope around every response but list org users. `Result` is parsed per operation. */
export const EnvelopeSchema = z.looseObject({
  Error: bool,
  ErrorDetails: opt(z.array(ErrorDetailSchema)),
  Message: str,
  RequestID: str,
  Result: z.unknown().optional(),
});
export type Envelope = z.infer<typeof EnvelopeSchema>;

/** A Result the spec declares an object but whose sample is a plain string: both are accepted. */
export const DeclaredResultSchema = z.union([z.string(), z.record(z.string(), z.unknown())]).nullish();
export type DeclaredResult = z.infer<typeof DeclaredResultSchema>;

export const FolderStatisticsSchema = z.looseObject({
  backup_size: int,
  billed_size: int,
  log_size: int,
  vector_size: int,
  total_size: int,
  workspaces: opt(z.array(z.looseObject({ size: int, workspace_id: str }))),
});
export type FolderStatistics = z.infer<typeof FolderStatisticsSchema>;

export const AgentConfigSchema = z.looseObject({
  catalog_activity_update_interval_seconds: int,
  heartbeat_interval_seconds: int,
  query_activity_update_interval_seconds: int,
  topology_update_interval_seconds: int,
  enable_topology_force_update: bool,
});

export const AddonSchema = z.looseObject({
  addons_id: z.string(),
  enable: z.boolean(),
  enable_configuration: opt(z.record(z.string(), z.unknown())),
  is_free: bool,
  unique_name: str,
  workspace_id: str,
});

export const WorkspaceTypeSchema = z.looseObject({
  cpu: str,
  memory: str,
  ha: int,
  partition: int,
  typeName: str,
});

export const WorkspaceSchema = z.looseObject({
  workspace_id: str,
  name: str,
  workgroup_id: str,
  workgroup_name: str,
  database_id: str,
  database_name: str,
  cloud_provider_id: str,
  cloud_provider_name: str,
  cloud_provider_short_id: str,
  org_id: str,
  org_name: str,
  region: str,
  creator: str,
  created_at: str,
  deleted_at: str,
  last_modified_time: str,
  last_maintenance: str,
  snapshot_time: str,
  status: str,
  display_status: str,
  condition_type: str,
  err_message: str,
  refresh_status: str,
  refresh_message: str,
  auto_upgrade_state: str,
  desired_svc_version: str,
  svc_version: str,
  update_strategy: str,
  auto_stop_minutes: int,
  enable_auto_start: bool,
  enable_copilot: bool,
  enable_ha: bool,
  is_rw: bool,
  replicas: int,
  edge_count: int,
  vertex_count: int,
  graph_topology_size_bytes: int,
  folder_statistics: opt(FolderStatisticsSchema),
  maintenance_window_day_of_week: int,
  maintenance_window_hour_of_day: int,
  maintenance_window_interval_weeks: int,
  maintenance_window_time_zone: str,
  gateway_host: str,
  solution_catalog_id: str,
  version_number: int,
  agent_config: opt(AgentConfigSchema),
  addons: opt(z.array(AddonSchema)),
  workspace_type: opt(WorkspaceTypeSchema),
});
export type Workspace = z.infer<typeof WorkspaceSchema>;

export const DatabaseSchema = z.looseObject({
  database_id: str,
  name: str,
  create_time: str,
  folder_statistics: opt(FolderStatisticsSchema),
  org_id: str,
  org_name: str,
  region: str,
  svc_version: str,
  workgroup_id: str,
  workspaces: opt(z.array(z.looseObject({}))),
});
export type Database = z.infer<typeof DatabaseSchema>;

export const WorkgroupSchema = z.looseObject({
  workgroup_id: str,
  name: str,
  cloud_provider_id: str,
  cloud_provider_name: str,
  cloud_provider_status: str,
  cloud_provider_type: str,
  creator: str,
  enable_allow_list: bool,
  enable_application_log: bool,
  encryption_method: str,
  is_current_ip_allowed: bool,
  org_id: str,
  org_name: str,
  platform: str,
  region: str,
  shared_storage: bool,
  svc_databases: opt(z.array(DatabaseSchema)),
  workspaces: opt(z.array(WorkspaceSchema)),
});
export type Workgroup = z.infer<typeof WorkgroupSchema>;

/** The log types `cluster_enabled_log_types` may hold. */
export const CLUSTER_LOG_TYPES = ['api', 'audit', 'authenticator', 'controllerManager', 'scheduler'] as const;
export type ClusterLogType = (typeof CLUSTER_LOG_TYPES)[number];

export const NodeGroupSchema = z.looseObject({
  max_size: int,
  min_size: int,
  overprovisioning_factor: int,
});
export type NodeGroup = z.infer<typeof NodeGroupSchema>;

export const NODE_GROUP_NAMES = ['ng_16', 'ng_32', 'ng_48', 'ng_64', 'ng_system'] as const;
export type NodeGroupName = (typeof NODE_GROUP_NAMES)[number];

export const NodeGroupConfigSchema = z.looseObject({
  ng_16: opt(NodeGroupSchema),
  ng_32: opt(NodeGroupSchema),
  ng_48: opt(NodeGroupSchema),
  ng_64: opt(NodeGroupSchema),
  ng_system: opt(NodeGroupSchema),
  prefetch_image_list: strList,
});
export type NodeGroupConfig = z.infer<typeof NodeGroupConfigSchema>;

export const CloudProviderSchema = z.looseObject({
  id: str,
  short_id: str,
  name: str,
  type: str,
  status: str,
  platform: str,
  region: str,
  org_id: str,
  created_at: str,
  updated_at: str,
  created_by: str,
  api_tokens: strList,
  availability_zones: strList,
  cluster_enabled_log_types: strList,
  component_versions: str,
  k8s_cluster_id: str,
  endpoint_service_name: str,
  last_error: str,
  node_group_config: opt(NodeGroupConfigSchema),
  options: opt(z.looseObject({ account_id: str, secure_connection: bool })),
  role_rn: str,
  role_external_id: str,
  security_group_id: str,
  subnet_id: strList,
  vpc_id: str,
  vpc_owned_by_svc: bool,
  version: str,
  version_number: int,
  work_dir: str,
});
export type CloudProvider = z.infer<typeof CloudProviderSchema>;

export const AllowListEntrySchema = z.looseObject({
  cidr: z.string(),
  id: str,
  note: str,
});
export type AllowListEntry = z.infer<typeof AllowListEntrySchema>;

/**
 * The current-IP result as the server sends it. The spec spells the `IsAllowed` key with a
 * leading space; both spellings are read, the spec's first.
 */
export const CurrentIpWireSchema = z.looseObject({
  ' IsAllowed': bool,
  IsAllowed: bool,
  CurrentIP: str,
});

export const CurrentIpSchema = CurrentIpWireSchema.transform((wire, ctx) => {
  const isAllowed = wire[' IsAllowed'] ?? wire.IsAllowed;
  if (typeof isAllowed !== 'boolean') {
    ctx.addIssue({ code: 'custom', message: 'missing boolean " IsAllowed"' });
    return z.NEVER;
  }
  if (typeof wire.CurrentIP !== 'string') {
    ctx.addIssue({ code: 'custom', message: 'missing string "CurrentIP"' });
    return z.NEVER;
  }
  return { isAllowed, currentIp: wire.CurrentIP };
});
export type CurrentIp = z.infer<typeof CurrentIpSchema>;

export const RoleSchema = z.looseObject({
  displayName: str,
  id: str,
  name: str,
  path: str,
  tenantID: str,
  trn: str,
});
export type Role = z.infer<typeof RoleSchema>;

const userFields = {
  idpUserID: str,
  created: str,
  email: str,
  enabled: bool,
  firstName: str,
  id: str,
  lastName: str,
  path: str,
  tenantID: str,
  trn: str,
  updated: str,
  username: str,
};

/** Result of creating an in-database user. `metadata` is declared an object but sampled as a string. */
export const DbUserSchema = z.looseObject({
  ...userFields,
  description: str,
  role: str,
  metadata: opt(z.union([z.string(), z.record(z.string(), z.unknown())])),
});
export type DbUser = z.infer<typeof DbUserSchema>;

export const OrgUserSchema = z.looseObject({
  ...userFields,
  authID: str,
  metadata: opt(z.looseObject({ attachedTo: strList, lastLogin: str })),
  roles: opt(z.array(RoleSchema)),
});
export type OrgUser = z.infer<typeof OrgUserSchema>;

/** Request bodies. */
export const DbUserCredentialsSchema = z.object({ username: z.string(), password: z.string() });
export type DbUserCredentials = z.infer<typeof DbUserCredentialsSchema>;

export const CloudProviderUpdateSchema = z.object({
  name: z.string().optional(),
  version: z.string().optional(),
});
export type CloudProviderUpdate = z.infer<typeof CloudProviderUpdateSchema>;

export const ComponentVersionSchema = z.object({ name: z.string(), version: z.string() });
export type ComponentVersion = z.infer<typeof ComponentVersionSchema>;

export const CloudProviderUpgradeSchema = z.object({
  cluster_enabled_log_types: z.array(z.string()).optional(),
  components: z.array(ComponentVersionSchema).optional(),
  node_group_config: NodeGroupConfigSchema.optional(),
});
export type CloudProviderUpgrade = z.infer<typeof CloudProviderUpgradeSchema>;

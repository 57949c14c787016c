import type { Prng } from './random.js';
import type { Ago, IdMaker } from './seed-ids.js';
import type { SimBackup, SimDatabase, SimDbUser, SimWorkgroup, SimWorkspace } from './state.js';
import { type WorkspaceStatus, workspaceStatusFields } from './status.js';

const DB_USERS: Record<string, { role: string; description: string }> = {
  app_reader: { role: 'reader', description: 'read-only application access' },
  app_writer: { role: 'writer', description: 'application writes' },
  etl_loader: { role: 'writer', description: 'nightly ETL loads' },
  analyst: { role: 'reader', description: 'ad-hoc analysis' },
  svc_backup: { role: 'admin', description: 'backup agent' },
};
const SVC_VERSIONS = ['4.1.3', '4.2.0'];
const DESIRED_SVC_VERSION = '4.2.0';
const INSTANCE_TYPES = [
  { cpu: '4', memory: '16Gi', typeName: 'TG-4' },
  { cpu: '8', memory: '32Gi', typeName: 'TG-8' },
  { cpu: '16', memory: '64Gi', typeName: 'TG-16' },
  { cpu: '32', memory: '128Gi', typeName: 'TG-32' },
];

export function makeDatabase(
  rand: Prng,
  ids: IdMaker,
  ago: Ago,
  workgroup: SimWorkgroup,
  name: string,
): SimDatabase {
  return {
    database_id: ids.next('db'),
    workgroup_id: workgroup.workgroup_id,
    name,
    create_time: ago(rand.int(60, 400)),
    svc_version: rand.pick(SVC_VERSIONS),
  };
}

interface WorkspaceInput {
  rand: Prng;
  ids: IdMaker;
  ago: Ago;
  workgroup: SimWorkgroup;
  database: SimDatabase;
  name: string;
  creator: string;
}

export function makeWorkspace({
  rand,
  ids,
  ago,
  workgroup,
  database,
  name,
  creator,
}: WorkspaceInput): SimWorkspace {
  const workspaceId = ids.next('ws');
  const status: WorkspaceStatus = rand.chance(0.2) ? 'Stopped' : 'Active';
  const vertexCount = rand.int(100_000, 50_000_000);
  const edgeCount = vertexCount * rand.int(2, 12);
  const topologyBytes = vertexCount * 120 + edgeCount * 40;
  const logSize = rand.int(1, 50) * 1_048_576;
  const backupSize = Math.round(topologyBytes * 0.6);
  const vectorSize = rand.chance(0.3) ? rand.int(1, 2_000) * 1_048_576 : 0;
  const totalSize = topologyBytes + logSize + backupSize + vectorSize;
  const svcVersion = rand.pick(SVC_VERSIONS);
  const enableHa = rand.chance(0.3);
  const instance = rand.pick(INSTANCE_TYPES);
  const created = rand.int(30, 300);
  return {
    workspace_id: workspaceId,
    name,
    workgroup_id: workgroup.workgroup_id,
    database_id: database.database_id,
    creator,
    created_at: ago(created),
    deleted_at: '',
    last_modified_time: ago(rand.int(0, 5) + 0.25),
    last_maintenance: ago(rand.int(1, 14)),
    snapshot_time: ago(created + 1),
    ...workspaceStatusFields(status),
    err_message: '',
    refresh_status: 'Succeeded',
    refresh_message: '',
    auto_upgrade_state: svcVersion === DESIRED_SVC_VERSION ? 'UpToDate' : 'Pending',
    desired_svc_version: DESIRED_SVC_VERSION,
    svc_version: svcVersion,
    update_strategy: rand.pick(['Auto', 'Manual']),
    auto_stop_minutes: rand.pick([0, 30, 60, 120]),
    enable_auto_start: rand.chance(0.5),
    enable_copilot: rand.chance(0.4),
    enable_ha: enableHa,
    is_rw: true,
    replicas: enableHa ? 2 : 1,
    edge_count: edgeCount,
    vertex_count: vertexCount,
    graph_topology_size_bytes: topologyBytes,
    folder_statistics: {
      backup_size: backupSize,
      billed_size: topologyBytes + vectorSize,
      log_size: logSize,
      vector_size: vectorSize,
      total_size: totalSize,
      workspaces: [{ size: totalSize, workspace_id: workspaceId }],
    },
    maintenance_window_day_of_week: rand.int(0, 6),
    maintenance_window_hour_of_day: rand.int(0, 23),
    maintenance_window_interval_weeks: rand.pick([1, 2, 4]),
    maintenance_window_time_zone: 'UTC',
    gateway_host: `${workspaceId}.${workgroup.region}.${workgroup.platform}.svc.example.net`,
    solution_catalog_id: '',
    version_number: rand.int(1, 40),
    agent_config: {
      catalog_activity_update_interval_seconds: 60,
      heartbeat_interval_seconds: 15,
      query_activity_update_interval_seconds: 30,
      topology_update_interval_seconds: 300,
      enable_topology_force_update: false,
    },
    addons: [
      {
        addons_id: ids.next('addon'),
        enable: rand.chance(0.5),
        enable_configuration: {},
        is_free: true,
        unique_name: 'graph-studio',
        workspace_id: workspaceId,
      },
    ],
    workspace_type: { ...instance, ha: enableHa ? 2 : 1, partition: rand.pick([1, 2, 4]) },
  };
}

/** Two backups per workspace, a day and a week old, each recording the graph as it was then. */
export function makeBackups(rand: Prng, ids: IdMaker, ago: Ago, ws: SimWorkspace): SimBackup[] {
  return [rand.int(12, 36) / 24, rand.int(6, 8)].map((daysAgo, k) => {
    const shrink = 1 - rand.next() * 0.05 * (k + 1);
    const vertexCount = Math.floor(ws.vertex_count * shrink);
    const edgeCount = Math.floor(ws.edge_count * shrink);
    return {
      backup_id: ids.next('bk', 8),
      workgroup_id: ws.workgroup_id,
      workspace_id: ws.workspace_id,
      created_at: ago(daysAgo),
      vertex_count: vertexCount,
      edge_count: edgeCount,
      size_bytes: vertexCount * 96 + edgeCount * 32,
    };
  });
}

export function makeDbUsers(
  rand: Prng,
  ids: IdMaker,
  ago: Ago,
  orgId: string,
  ws: SimWorkspace,
): SimDbUser[] {
  return rand
    .shuffle(Object.keys(DB_USERS))
    .slice(0, rand.int(1, 3))
    .map((username) => {
      const created = ago(rand.int(10, 200));
      const profile = DB_USERS[username] ?? { role: 'reader', description: '' };
      return {
        id: ids.next('dbu'),
        idpUserID: ids.next('idp', 12),
        username,
        workgroup_id: ws.workgroup_id,
        workspace_id: ws.workspace_id,
        created,
        updated: created,
        description: profile.description,
        email: '',
        enabled: true,
        firstName: '',
        lastName: '',
        path: `/${orgId}/${ws.workgroup_id}/${ws.workspace_id}`,
        role: profile.role,
        tenantID: orgId,
        trn: `trn:svc:${orgId}:workspace/${ws.workspace_id}/dbuser/${username}`,
        metadata: { created_by: ws.creator ?? '' },
        password_version: 1,
        password_set_at: created,
      };
    });
}

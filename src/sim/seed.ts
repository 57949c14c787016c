import { CLUSTER_LOG_TYPES, type NodeGroupConfig } from '../api/schemas.js';
import { isoTime } from './clock.js';
import { Prng } from './random.js';
import {
  type SimAllowListEntry,
  type SimBackup,
  type SimCloudProvider,
  type SimDatabase,
  type SimDbUser,
  type SimOrgUser,
  type SimState,
  SimStateSchema,
  type SimWorkgroup,
  type SimWorkspace,
  STATE_FORMAT,
} from './state.js';
import { type WorkspaceStatus, workspaceStatusFields } from './status.js';

/** W workgroups × S workspaces each. */
export interface Fleet {
  workgroups: number;
  workspacesPerWorkgroup: number;
}

export const DEFAULT_FLEET: Fleet = { workgroups: 4, workspacesPerWorkgroup: 3 };
export const MAX_FLEET: Fleet = { workgroups: 2000, workspacesPerWorkgroup: 100 };
/** Bounds the generated state (about 17 kB a workspace) whatever the shape. */
export const MAX_FLEET_WORKSPACES = 20_000;

/** Parses `WxS` (e.g. `20x5`); throws a RangeError that says what was wrong. */
export function parseFleet(text: string): Fleet {
  const match = /^(\d+)x(\d+)$/i.exec(text.trim());
  if (!match) throw new RangeError(`fleet must look like WxS (e.g. 20x5), got "${text}"`);
  const fleet = { workgroups: Number(match[1]), workspacesPerWorkgroup: Number(match[2]) };
  if (fleet.workgroups < 1 || fleet.workgroups > MAX_FLEET.workgroups) {
    throw new RangeError(`fleet workgroups must be 1-${MAX_FLEET.workgroups}, got ${fleet.workgroups}`);
  }
  if (fleet.workspacesPerWorkgroup < 1 || fleet.workspacesPerWorkgroup > MAX_FLEET.workspacesPerWorkgroup) {
    throw new RangeError(
      `fleet workspaces per workgroup must be 1-${MAX_FLEET.workspacesPerWorkgroup}, got ${fleet.workspacesPerWorkgroup}`,
    );
  }
  const total = fleet.workgroups * fleet.workspacesPerWorkgroup;
  if (total > MAX_FLEET_WORKSPACES) {
    throw new RangeError(`fleet must hold at most ${MAX_FLEET_WORKSPACES} workspaces in all, got ${total}`);
  }
  return fleet;
}

export function formatFleet(fleet: Fleet): string {
  return `${fleet.workgroups}x${fleet.workspacesPerWorkgroup}`;
}

/**
 * Names are fixed by position so policies can target them with globs whatever the seed:
 * `dev-*`, `prod-*`, `staging-*`, and `ops` (with a `drill` workspace) from four workgroups up.
 */
const WORKGROUP_NAMES = [
  'prod-core',
  'dev-alpha',
  'staging-eu',
  'ops',
  'dev-beta',
  'prod-edge',
  'staging-us',
  'dev-gamma',
  'analytics',
  'qa-main',
  'prod-payments',
  'dev-delta',
  'sandbox',
  'research',
  'prod-search',
  'staging-apac',
  'dev-epsilon',
  'ml-platform',
  'prod-batch',
  'dev-zeta',
];
const WORKSPACE_NAMES = [
  'main',
  'analytics',
  'fraud',
  'recs',
  'search',
  'etl',
  'reporting',
  'lineage',
  'kg',
  'ingest',
];
const DATABASE_NAMES = ['graph', 'events', 'catalog', 'customers', 'ledger', 'telemetry'];
const ORG_NAMES = ['Acme Graph Labs', 'Northwind Analytics', 'Globex Data', 'Initech Research'];
const FIRST_NAMES = [
  'Ada',
  'Grace',
  'Linus',
  'Margaret',
  'Ken',
  'Barbara',
  'Dennis',
  'Frances',
  'Edsger',
  'Radia',
];
const LAST_NAMES = [
  'Lovelace',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Thompson',
  'Liskov',
  'Ritchie',
  'Allen',
  'Perlman',
];
const REGIONS = {
  cloud_a: ['us-east-1', 'eu-west-1', 'ap-southeast-1'],
  cloud_b: ['eastus', 'westeurope'],
  cloud_c: ['us-central1', 'europe-west4'],
} as const;
type Platform = keyof typeof REGIONS;
const PLATFORMS = Object.keys(REGIONS) as Platform[];
const ORG_ROLES = [
  { name: 'org-admin', displayName: 'Organization Admin' },
  { name: 'workgroup-admin', displayName: 'Workgroup Admin' },
  { name: 'workspace-operator', displayName: 'Workspace Operator' },
  { name: 'viewer', displayName: 'Viewer' },
];
const DB_USERS: Record<string, { role: string; description: string }> = {
  app_reader: { role: 'reader', description: 'read-only application access' },
  app_writer: { role: 'writer', description: 'application writes' },
  etl_loader: { role: 'writer', description: 'nightly ETL loads' },
  analyst: { role: 'reader', description: 'ad-hoc analysis' },
  svc_backup: { role: 'admin', description: 'backup agent' },
};
const SVC_VERSIONS = ['4.1.3', '4.2.0'];
const DESIRED_SVC_VERSION = '4.2.0';
const COMPONENT_VERSIONS: Record<string, string[]> = {
  engine: ['4.1.3', '4.2.0'],
  gateway: ['1.9.2', '1.10.0'],
  agent: ['2.4.0', '2.5.1'],
  autoscaler: ['1.2.0', '1.3.0'],
};
const INSTANCE_TYPES = [
  { cpu: '4', memory: '16Gi', typeName: 'TG-4' },
  { cpu: '8', memory: '32Gi', typeName: 'TG-8' },
  { cpu: '16', memory: '64Gi', typeName: 'TG-16' },
  { cpu: '32', memory: '128Gi', typeName: 'TG-32' },
];

/** Seeded times count back from a fixed instant so the same seed gives byte-identical state. */
export const SEED_EPOCH_MS = Date.UTC(2025, 5, 1);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Ids that look like the real thing (`wg-3f9a1c`) and never repeat within one state. */
class IdMaker {
  readonly #used = new Set<string>();
  constructor(readonly rand: Prng) {}

  next(prefix: string, length = 6): string {
    for (;;) {
      const candidate = `${prefix}-${this.rand.hex(length)}`;
      if (!this.#used.has(candidate)) {
        this.#used.add(candidate);
        return candidate;
      }
    }
  }
}

interface Person {
  firstName: string;
  lastName: string;
  email: string;
}

export interface SeedOptions {
  seed: number;
  fleet: Fleet;
}

/** A whole fleet from a seed: the same seed and fleet always give the same state. */
export function seedState({ seed, fleet }: SeedOptions): SimState {
  const rand = new Prng(seed);
  const ids = new IdMaker(rand);
  const ago = (days: number) => isoTime(SEED_EPOCH_MS - Math.round((days * DAY) / 1000) * 1000);
  const org = { org_id: ids.next('org', 8), org_name: rand.pick(ORG_NAMES) };
  const people = makePeople(rand, Math.min(12, 3 + fleet.workgroups));
  const state: SimState = {
    format: STATE_FORMAT,
    org,
    settings: { org_users_shape: 'auto' },
    cloudProviders: [],
    workgroups: [],
    databases: [],
    workspaces: [],
    backups: [],
    dbUsers: [],
    orgUsers: [],
    transitions: [],
  };

  for (let w = 0; w < fleet.workgroups; w++) {
    const round = Math.floor(w / WORKGROUP_NAMES.length);
    const name = `${WORKGROUP_NAMES[w % WORKGROUP_NAMES.length]}${round > 0 ? `-${round + 1}` : ''}`;
    const platform = rand.pick(PLATFORMS);
    const region = rand.pick(REGIONS[platform]);
    const creator = rand.pick(people).email;
    const provider = makeCloudProvider({
      rand,
      ids,
      ago,
      org_id: org.org_id,
      name,
      platform,
      region,
      creator,
    });
    state.cloudProviders.push(provider);
    const workgroup: SimWorkgroup = {
      workgroup_id: ids.next('wg'),
      name,
      cloud_provider_id: provider.id,
      creator,
      enable_allow_list: rand.chance(0.8),
      enable_application_log: rand.chance(0.5),
      encryption_method: 'TMK',
      platform,
      region,
      shared_storage: rand.chance(0.3),
      allow_list: makeAllowList(rand, ids, w === 0),
    };
    state.workgroups.push(workgroup);

    const databaseCount = Math.max(1, Math.ceil(fleet.workspacesPerWorkgroup / 3));
    const databases = rand
      .shuffle(DATABASE_NAMES)
      .slice(0, Math.min(databaseCount, DATABASE_NAMES.length))
      .map((dbName) => makeDatabase(rand, ids, ago, workgroup, dbName));
    for (let d = databases.length; d < databaseCount; d++) {
      databases.push(makeDatabase(rand, ids, ago, workgroup, `graph-${d + 1}`));
    }

    const workspaceNames = pickWorkspaceNames(rand, fleet.workspacesPerWorkgroup, name === 'ops');
    const workspaces = workspaceNames.map((wsName, s) => {
      const database = databases[s % databases.length] as SimDatabase;
      return makeWorkspace({
        rand,
        ids,
        ago,
        workgroup,
        database,
        name: wsName,
        creator: rand.pick(people).email,
      });
    });
    for (const database of databases) {
      database.folder_statistics = sumFolderStatistics(
        workspaces.filter((ws) => ws.database_id === database.database_id),
      );
    }
    // An empty database so that deleting one can succeed on a freshly seeded fleet.
    const archive = makeDatabase(rand, ids, ago, workgroup, 'archive');
    archive.folder_statistics = sumFolderStatistics([]);
    databases.push(archive);

    state.databases.push(...databases);
    state.workspaces.push(...workspaces);
    for (const ws of workspaces) {
      state.backups.push(...makeBackups(rand, ids, ago, ws));
      state.dbUsers.push(...makeDbUsers(rand, ids, ago, org.org_id, ws));
    }
  }

  ensureActiveAndStopped(state.workspaces);
  state.orgUsers = makeOrgUsers(rand, ids, ago, org.org_id, people, state.workgroups);
  // Parsing puts keys in schema order, so a saved and reloaded state serialises byte for byte alike.
  return SimStateSchema.parse(state);
}

type Ago = (days: number) => string;

function makePeople(rand: Prng, count: number): Person[] {
  const people: Person[] = [];
  const used = new Set<string>();
  while (people.length < count) {
    const firstName = rand.pick(FIRST_NAMES);
    const lastName = rand.pick(LAST_NAMES);
    const email = `${firstName}.${lastName}@example.com`.toLowerCase();
    if (used.has(email)) continue;
    used.add(email);
    people.push({ firstName, lastName, email });
  }
  return people;
}

function pickWorkspaceNames(rand: Prng, count: number, withDrill: boolean): string[] {
  const pool = rand.shuffle(WORKSPACE_NAMES);
  const names: string[] = [];
  if (withDrill) names.push('drill');
  for (let i = 0; names.length < count; i++) {
    const round = Math.floor(i / pool.length);
    names.push(`${pool[i % pool.length]}${round > 0 ? `-${round + 1}` : ''}`);
  }
  return names.slice(0, count);
}

function makeAllowList(rand: Prng, ids: IdMaker, withLoopback: boolean): SimAllowListEntry[] {
  const candidates = [
    () => ({ cidr: `203.0.113.${rand.int(1, 254)}/32`, note: 'office egress' }),
    () => ({ cidr: '198.51.100.0/24', note: 'corporate VPN' }),
    () => ({ cidr: `192.0.2.${rand.int(1, 254)}/32`, note: 'CI runners' }),
    () => ({ cidr: `10.${rand.int(0, 255)}.0.0/16`, note: 'peered VPC' }),
    () => ({ cidr: `2001:db8:${rand.hex(4)}::/48`, note: 'IPv6 office range' }),
  ];
  const entries = rand
    .shuffle(candidates)
    .slice(0, rand.int(2, 4))
    .map((make) => {
      const id = ids.next('al');
      const { cidr, note } = make();
      return { cidr, id, note };
    });
  if (withLoopback || rand.chance(0.4)) {
    entries.push({ cidr: '127.0.0.1/32', id: ids.next('al'), note: 'local tooling' });
  }
  return entries;
}

interface ProviderInput {
  rand: Prng;
  ids: IdMaker;
  ago: Ago;
  org_id: string;
  name: string;
  platform: Platform;
  region: string;
  creator: string;
}

function makeCloudProvider({
  rand,
  ids,
  ago,
  org_id,
  name,
  platform,
  region,
  creator,
}: ProviderInput): SimCloudProvider {
  const id = ids.next('cp');
  const shortId = id.slice(3);
  const accountId = String(rand.int(100_000, 999_999)) + String(rand.int(100_000, 999_999));
  const versions = Object.fromEntries(
    Object.entries(COMPONENT_VERSIONS).map(([component, choices]) => [component, rand.pick(choices)]),
  );
  const logTypes = new Set(rand.shuffle(CLUSTER_LOG_TYPES).slice(0, rand.int(1, 3)));
  const zoneSuffixes =
    platform === 'cloud_b'
      ? ['-1', '-2', '-3']
      : platform === 'cloud_c'
        ? ['-a', '-b', '-c']
        : ['a', 'b', 'c'];
  const nodeGroup = (max: number) => ({
    max_size: rand.int(1, max),
    min_size: 0,
    overprovisioning_factor: rand.int(0, 2),
  });
  const nodeGroups: NodeGroupConfig = {
    ng_16: nodeGroup(8),
    ng_32: nodeGroup(6),
    ng_48: nodeGroup(4),
    ng_64: nodeGroup(2),
    ng_system: { max_size: 3, min_size: 1, overprovisioning_factor: 0 },
    prefetch_image_list: [`registry.example.net/svc/engine:${versions.engine}`],
  };
  const created = rand.int(90, 400);
  return {
    id,
    short_id: shortId,
    name: `${name}-byoc`,
    type: 'cross_account_role',
    status: 'Active',
    platform,
    region,
    org_id,
    created_at: ago(created),
    updated_at: ago(rand.int(1, created)),
    created_by: creator,
    api_tokens: [`tok_****${rand.hex(4)}`],
    availability_zones: zoneSuffixes.map((suffix) => `${region}${suffix}`),
    cluster_enabled_log_types: CLUSTER_LOG_TYPES.filter((type) => logTypes.has(type)),
    component_versions: JSON.stringify(versions),
    k8s_cluster_id: `k8s-${rand.hex(10)}`,
    endpoint_service_name: `svc-endpoint-${rand.hex(8)}.${region}.example.net`,
    last_error: '',
    node_group_config: nodeGroups,
    options: { account_id: accountId, secure_connection: rand.chance(0.5) },
    role_rn: `rn:${platform}:iam::${accountId}:role/svc-byoc-${shortId}`,
    role_external_id: `ext-${rand.hex(16)}`,
    security_group_id: `sg-${rand.hex(12)}`,
    subnet_id: [`subnet-${rand.hex(8)}`, `subnet-${rand.hex(8)}`],
    vpc_id: `vpc-${rand.hex(12)}`,
    vpc_owned_by_svc: rand.chance(0.5),
    version: rand.pick(['1.4.2', '1.5.0']),
    version_number: rand.int(1, 12),
    work_dir: `/var/lib/svc/byoc/${id}`,
  };
}

function makeDatabase(
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

function makeWorkspace({ rand, ids, ago, workgroup, database, name, creator }: WorkspaceInput): SimWorkspace {
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

function sumFolderStatistics(workspaces: SimWorkspace[]): SimDatabase['folder_statistics'] {
  const totals = { backup_size: 0, billed_size: 0, log_size: 0, vector_size: 0, total_size: 0 };
  for (const ws of workspaces) {
    const stats = ws.folder_statistics;
    totals.backup_size += stats?.backup_size ?? 0;
    totals.billed_size += stats?.billed_size ?? 0;
    totals.log_size += stats?.log_size ?? 0;
    totals.vector_size += stats?.vector_size ?? 0;
    totals.total_size += stats?.total_size ?? 0;
  }
  return {
    ...totals,
    workspaces: workspaces.map((ws) => ({
      size: ws.folder_statistics?.total_size ?? 0,
      workspace_id: ws.workspace_id,
    })),
  };
}

/** Two backups per workspace, a day and a week old, each recording the graph as it was then. */
function makeBackups(rand: Prng, ids: IdMaker, ago: Ago, ws: SimWorkspace): SimBackup[] {
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

function makeDbUsers(rand: Prng, ids: IdMaker, ago: Ago, orgId: string, ws: SimWorkspace): SimDbUser[] {
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

/** Pausing and resuming both need a candidate; a fleet of two or more always has one of each. */
function ensureActiveAndStopped(workspaces: SimWorkspace[]): void {
  if (workspaces.length < 2) return;
  const set = (ws: SimWorkspace | undefined, status: WorkspaceStatus) => {
    if (ws) Object.assign(ws, workspaceStatusFields(status));
  };
  if (!workspaces.some((ws) => ws.status === 'Stopped')) set(workspaces.at(-1), 'Stopped');
  if (!workspaces.some((ws) => ws.status === 'Active')) set(workspaces[0], 'Active');
}

function makeOrgUsers(
  rand: Prng,
  ids: IdMaker,
  ago: Ago,
  orgId: string,
  people: Person[],
  workgroups: SimWorkgroup[],
): SimOrgUser[] {
  const roles = ORG_ROLES.map((role) => ({
    ...role,
    id: ids.next('role'),
    path: `/roles/${role.name}`,
    tenantID: orgId,
    trn: `trn:svc:${orgId}:role/${role.name}`,
  }));
  const workgroupIds = workgroups.map((wg) => wg.workgroup_id);
  return people.map((person, i) => {
    const id = ids.next('usr', 8);
    const role = i === 0 ? roles[0] : rand.pick(roles.slice(1));
    const attachedTo = i === 0 ? workgroupIds : rand.shuffle(workgroupIds).slice(0, rand.int(1, 2));
    // About one user in four has not signed in for months: material for stale-user policies.
    const lastLoginDays = rand.chance(0.25) ? rand.int(90, 400) : rand.int(1, 72) / 24;
    const created = rand.int(400, 900);
    return {
      id,
      idpUserID: ids.next('idp', 12),
      authID: `authn|${rand.hex(24)}`,
      created: ago(created),
      updated: ago(rand.int(1, created)),
      email: person.email,
      enabled: i === 0 || rand.chance(0.9),
      firstName: person.firstName,
      lastName: person.lastName,
      metadata: { attachedTo, lastLogin: ago(lastLoginDays) },
      path: `/orgs/${orgId}/users/${id}`,
      roles: role ? [role] : [],
      tenantID: orgId,
      trn: `trn:svc:${orgId}:user/${id}`,
      username: person.email,
    };
  });
}

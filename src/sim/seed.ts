import type { Fleet } from './fleet.js';
import { isoTime } from './iso-time.js';
import { Prng } from './random.js';
import { type Ago, IdMaker } from './seed-ids.js';
import { makeOrgUsers, makePeople, type Person } from './seed-people.js';
import { makeAllowList, makeCloudProvider, PLATFORMS, REGIONS } from './seed-providers.js';
import { makeBackups, makeDatabase, makeDbUsers, makeWorkspace } from './seed-workspaces.js';
import {
  type SimDatabase,
  type SimState,
  SimStateSchema,
  type SimWorkgroup,
  type SimWorkspace,
  STATE_FORMAT,
} from './state.js';
import { type WorkspaceStatus, workspaceStatusFields } from './status.js';

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
/** Seeded times count back from a fixed instant so the same seed gives byte-identical state. */
export const SEED_EPOCH_MS = Date.UTC(2025, 5, 1);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

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

  const context: SeedContext = { rand, ids, ago, orgId: org.org_id, people, fleet };
  for (let w = 0; w < fleet.workgroups; w++) seedWorkgroup(context, w, state);

  ensureActiveAndStopped(state.workspaces);
  state.orgUsers = makeOrgUsers(rand, ids, ago, org.org_id, people, state.workgroups);
  // Parsing puts keys in schema order, so a saved and reloaded state serialises byte for byte alike.
  return SimStateSchema.parse(state);
}

/**
 * What each workgroup is seeded from. Every record draws from the one `rand`, in a fixed order:
 * that order is what makes a seed give the same state, so the draws stay in sequence.
 */
interface SeedContext {
  readonly rand: Prng;
  readonly ids: IdMaker;
  readonly ago: Ago;
  readonly orgId: string;
  readonly people: readonly Person[];
  readonly fleet: Fleet;
}

/** The workgroup at position `w` and everything in it, added to `state`. */
function seedWorkgroup(context: SeedContext, w: number, state: SimState): void {
  const { rand, ids, ago, orgId, people, fleet } = context;
  const workgroup = addWorkgroup(context, w, state);
  const databases = makeDatabases(context, workgroup);

  const workspaceNames = pickWorkspaceNames(rand, fleet.workspacesPerWorkgroup, workgroup.name === 'ops');
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
    state.dbUsers.push(...makeDbUsers(rand, ids, ago, orgId, ws));
  }
}

/** The workgroup at position `w`, named by position, and its cloud provider, both added to `state`. */
function addWorkgroup(
  { rand, ids, ago, orgId, people }: SeedContext,
  w: number,
  state: SimState,
): SimWorkgroup {
  const round = Math.floor(w / WORKGROUP_NAMES.length);
  const name = `${WORKGROUP_NAMES[w % WORKGROUP_NAMES.length]}${round > 0 ? `-${round + 1}` : ''}`;
  const platform = rand.pick(PLATFORMS);
  const region = rand.pick(REGIONS[platform]);
  const creator = rand.pick(people).email;
  const provider = makeCloudProvider({
    rand,
    ids,
    ago,
    org_id: orgId,
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
  return workgroup;
}

/** One database for every three workspaces, at least one: names drawn from DATABASE_NAMES, then `graph-N`. */
function makeDatabases({ rand, ids, ago, fleet }: SeedContext, workgroup: SimWorkgroup): SimDatabase[] {
  const databaseCount = Math.max(1, Math.ceil(fleet.workspacesPerWorkgroup / 3));
  const databases = rand
    .shuffle(DATABASE_NAMES)
    .slice(0, Math.min(databaseCount, DATABASE_NAMES.length))
    .map((dbName) => makeDatabase(rand, ids, ago, workgroup, dbName));
  for (let d = databases.length; d < databaseCount; d++) {
    databases.push(makeDatabase(rand, ids, ago, workgroup, `graph-${d + 1}`));
  }
  return databases;
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

/** Pausing and resuming both need a candidate; a fleet of two or more always has one of each. */
function ensureActiveAndStopped(workspaces: SimWorkspace[]): void {
  if (workspaces.length < 2) return;
  const set = (ws: SimWorkspace | undefined, status: WorkspaceStatus) => {
    if (ws) Object.assign(ws, workspaceStatusFields(status));
  };
  if (!workspaces.some((ws) => ws.status === 'Stopped')) set(workspaces.at(-1), 'Stopped');
  if (!workspaces.some((ws) => ws.status === 'Active')) set(workspaces[0], 'Active');
}

import type { z } from 'zod';
import type {
  AllowListEntry,
  CloudProvider,
  CurrentIpWireSchema,
  Database,
  DbUser,
  OrgUser,
  Workgroup,
  Workspace,
} from '../api/index.js';
import { AllowListMatcher, isCallerAllowed, normalizeIp } from './allow-list.js';
import type {
  OrgUsersShape,
  SimCloudProvider,
  SimDatabase,
  SimDbUser,
  SimOrgUser,
  SimState,
  SimWorkgroup,
  SimWorkspace,
} from './state.js';
import type { SimStore } from './store.js';

/**
 * Turns stored records into the API's response shapes, typed by the client's own schemas,
 * filling in the fields that follow from relations.
 */

type Org = SimState['org'];

export function renderWorkspace(
  ws: SimWorkspace,
  wg: SimWorkgroup,
  db: SimDatabase | undefined,
  cp: SimCloudProvider | undefined,
  org: Org,
): Workspace {
  return {
    ...ws,
    workgroup_name: wg.name,
    database_name: db?.name ?? '',
    cloud_provider_id: wg.cloud_provider_id,
    cloud_provider_name: cp?.name ?? '',
    cloud_provider_short_id: cp?.short_id ?? '',
    org_id: org.org_id,
    org_name: org.org_name,
    region: wg.region,
  };
}

export function renderWorkgroups(store: SimStore, callerAllowed: (wg: SimWorkgroup) => boolean): Workgroup[] {
  const { org } = store.state;
  const workspacesByGroup = groupBy(store.state.workspaces, (ws) => ws.workgroup_id);
  const databasesByGroup = groupBy(store.state.databases, (db) => db.workgroup_id);
  return store.state.workgroups.map((wg) => {
    const cp = store.cloudProviders.get(wg.cloud_provider_id);
    const workspaces = workspacesByGroup.get(wg.workgroup_id) ?? [];
    const databases: Database[] = (databasesByGroup.get(wg.workgroup_id) ?? []).map((db) => ({
      ...db,
      org_id: org.org_id,
      org_name: org.org_name,
      region: wg.region,
      workspaces: workspaces
        .filter((ws) => ws.database_id === db.database_id)
        .map((ws) => ({ workspace_id: ws.workspace_id, name: ws.name, status: ws.status })),
    }));
    const { allow_list: _allowList, ...fields } = wg;
    return {
      ...fields,
      cloud_provider_name: cp?.name ?? '',
      cloud_provider_status: cp?.status ?? '',
      cloud_provider_type: cp?.type ?? '',
      is_current_ip_allowed: callerAllowed(wg),
      org_id: org.org_id,
      org_name: org.org_name,
      svc_databases: databases,
      workspaces: workspaces.map((ws) =>
        renderWorkspace(ws, wg, store.databases.get(ws.database_id), cp, org),
      ),
    };
  });
}

export function renderAllowList(wg: SimWorkgroup): AllowListEntry[] {
  return wg.allow_list.map(({ id, cidr, note }) => ({ cidr, id, note }));
}

export function renderCloudProvider(cp: SimCloudProvider): CloudProvider {
  return cp;
}

/** The creation result, with `metadata` as a string as in the spec's sample. */
export function renderDbUser(user: SimDbUser): DbUser {
  const {
    workgroup_id: _workgroupId,
    workspace_id: _workspaceId,
    password_version: _passwordVersion,
    password_set_at: _passwordSetAt,
    metadata,
    ...fields
  } = user;
  return { ...fields, metadata: JSON.stringify(metadata) };
}

/** The current-IP result, its `IsAllowed` key spelled with the leading space the spec shows. */
export function renderCurrentIp(allowed: boolean, ip: string): z.input<typeof CurrentIpWireSchema> {
  return { ' IsAllowed': allowed, CurrentIP: ip };
}

/** The spec leaves open whether the body is one user or a list; see `OrgUsersShape`. */
export function renderOrgUsers(users: SimOrgUser[], shape: OrgUsersShape): OrgUser | OrgUser[] {
  const first = users[0];
  if (first && (shape === 'object' || (shape === 'auto' && users.length === 1))) return first;
  return users;
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * Serialised results cached per state revision: list workgroups for 20×5 workspaces is
 * hundreds of kilobytes, and polling it must not cost a full serialisation each time. The
 * large ones are kept as Buffers: encoding them to UTF-8 per request tripled their cost.
 */
export class RenderCache {
  #revision = -1;
  readonly #workgroupsByIp = new Map<string, Buffer>();
  readonly #allowLists = new Map<string, string>();
  readonly #matchers = new Map<string, AllowListMatcher>();
  #stateJson: Buffer | null = null;

  constructor(readonly store: SimStore) {}

  #sync(): void {
    if (this.#revision === this.store.revision) return;
    this.#revision = this.store.revision;
    this.#workgroupsByIp.clear();
    this.#allowLists.clear();
    this.#matchers.clear();
    this.#stateJson = null;
  }

  callerAllowed(wg: SimWorkgroup, ip: string): boolean {
    this.#sync();
    let matcher = this.#matchers.get(wg.workgroup_id);
    if (!matcher) {
      matcher = new AllowListMatcher(wg.allow_list.map((entry) => entry.cidr));
      this.#matchers.set(wg.workgroup_id, matcher);
    }
    return isCallerAllowed(wg.enable_allow_list, matcher, normalizeIp(ip));
  }

  workgroupsJson(ip: string): Buffer {
    this.#sync();
    let json = this.#workgroupsByIp.get(ip);
    if (json === undefined) {
      json = Buffer.from(JSON.stringify(renderWorkgroups(this.store, (wg) => this.callerAllowed(wg, ip))));
      // Callers are few (tests, a worker, a benchmark); the bound only guards against a flood.
      if (this.#workgroupsByIp.size >= 64) this.#workgroupsByIp.clear();
      this.#workgroupsByIp.set(ip, json);
    }
    return json;
  }

  allowListJson(wg: SimWorkgroup): string {
    this.#sync();
    let json = this.#allowLists.get(wg.workgroup_id);
    if (json === undefined) {
      json = JSON.stringify(renderAllowList(wg));
      this.#allowLists.set(wg.workgroup_id, json);
    }
    return json;
  }

  stateJson(): Buffer {
    this.#sync();
    this.#stateJson ??= Buffer.from(JSON.stringify(this.store.state));
    return this.#stateJson;
  }
}

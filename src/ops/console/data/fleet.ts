import {
  decideWindows,
  type FleetListing,
  type FleetWindowsInput,
  type Hold,
  holdLookup,
  type Ownership,
} from '../../../engine/index.js';
import type { Policy } from '../../../policy/index.js';
import type { FleetView, FleetWorkgroupView, FleetWorkspaceView } from '../model.js';
import { holdEffect } from './hold-effect.js';
import type { ConsoleSources, PolicyInForce } from './sources.js';

export interface FleetFilters {
  workgroup?: string | undefined;
  state?: string | undefined;
}

type WindowMark = NonNullable<FleetWorkspaceView['window']>;

/** What each window wants of the workspaces it covers, by workspace key, as `nightshift drift` decides it. */
function windowMarks(
  policy: Policy | string,
  input: Omit<FleetWindowsInput, 'jobs'>,
): Map<string, WindowMark> {
  const marks = new Map<string, WindowMark>();
  if (typeof policy === 'string') return marks;
  for (const { job, decision } of decideWindows({ ...input, jobs: policy.jobs }))
    for (const d of decision.decisions)
      marks.set(d.key, { name: job.name, desired: d.desired ?? null, drift: d.drift, why: d.why });
  return marks;
}

function ownerOf(record: Ownership | undefined): FleetWorkspaceView['owner'] {
  if (!record) return null;
  return {
    kind: record.ownerKind,
    name: record.owner,
    since: record.pausedAt ?? record.intendedAt,
    state: record.state,
  };
}

function holdOf(
  hold: Hold | undefined,
  status: string,
  window: string | null | undefined,
): FleetWorkspaceView['hold'] {
  if (!hold) return null;
  return {
    pattern: hold.pattern,
    state: hold.state,
    until: hold.until,
    by: hold.by,
    reason: hold.reason,
    ...holdEffect(hold, status, window),
  };
}

/**
 * The fleet page's data: the last listing a run made (re-read only when a newer one is stored),
 * with the ledger's owners, the holds and what each window wants. Never an API call.
 */
export class FleetData {
  readonly #sources: ConsoleSources;
  readonly #policy: PolicyInForce;
  #listing: FleetListing | undefined;

  constructor(sources: ConsoleSources, policy: PolicyInForce) {
    this.#sources = sources;
    this.#policy = policy;
  }

  async #latestListing(): Promise<FleetListing | undefined> {
    const at = await this.#sources.listings.latestAt();
    if (at === undefined) return undefined;
    if (this.#listing?.at !== at) this.#listing = await this.#sources.listings.latest();
    return this.#listing;
  }

  async view(filters: FleetFilters = {}): Promise<FleetView> {
    const now = this.#sources.now?.() ?? new Date();
    const stores = this.#sources.state;
    const [listing, owned, holds, windowStates, { policy }] = await Promise.all([
      this.#latestListing(),
      stores.ledger.all(),
      stores.holds.active(now, { readOnly: true }),
      stores.windows.all(),
      this.#policy.read(),
    ]);
    const workgroups = listing?.workgroups ?? [];
    const marks = windowMarks(policy, { workgroups, owned, holds, states: windowStates, now });
    const holdOn = holdLookup(holds, now);
    const byState: Record<string, number> = {};
    const counts = { workspaces: 0, byState, owned: 0, held: 0, heldIdle: 0, drifting: 0 };
    const names = new Set<string>();
    const shown: FleetWorkgroupView[] = [];
    for (const workgroup of workgroups) {
      const workgroupId = workgroup.workgroup_id;
      if (typeof workgroupId !== 'string') continue;
      const workgroupName = workgroup.name ?? workgroupId;
      names.add(workgroupName);
      const workspaces: FleetWorkspaceView[] = [];
      for (const workspace of workgroup.workspaces ?? []) {
        const workspaceId = workspace.workspace_id;
        if (typeof workspaceId !== 'string' || workspaceId === '') continue;
        const key = `${workgroupId}/${workspaceId}`;
        const workspaceName = workspace.name ?? workspaceId;
        const state = workspace.status ?? 'unknown';
        const window = marks.get(key) ?? null;
        const hold = holdOn({ workgroupId, workgroupName, workspaceId, workspaceName });
        const view: FleetWorkspaceView = {
          id: workspaceId,
          name: workspaceName,
          state,
          owner: ownerOf(owned.get(key)),
          hold: holdOf(hold, state, typeof policy === 'string' ? undefined : (window?.name ?? null)),
          window,
        };
        counts.workspaces += 1;
        byState[view.state] = (byState[view.state] ?? 0) + 1;
        if (view.owner) counts.owned += 1;
        if (view.hold?.inEffect === false) counts.heldIdle += 1;
        else if (view.hold) counts.held += 1;
        if (view.window?.drift) counts.drifting += 1;
        if (filters.state && view.state !== filters.state) continue;
        workspaces.push(view);
      }
      if (filters.workgroup && filters.workgroup !== workgroupName && filters.workgroup !== workgroupId)
        continue;
      if (workspaces.length > 0 || !filters.state)
        shown.push({ id: workgroupId, name: workgroupName, workspaces });
    }
    return {
      generatedAt: now.toISOString(),
      listing: listing
        ? {
            at: listing.at,
            ageMs: Math.max(0, now.getTime() - Date.parse(listing.at)),
            runId: listing.runId,
            job: listing.job,
          }
        : null,
      filters: { workgroup: filters.workgroup ?? null, state: filters.state ?? null },
      counts,
      workgroupNames: [...names].sort(),
      states: Object.keys(byState).sort(),
      workgroups: shown,
    };
  }
}

import { randomUUID } from 'node:crypto';
import { NODE_GROUP_NAMES, type NodeGroupConfig } from '../api/index.js';
import type { Clock, Timer } from '../time/index.js';
import { isoTime } from './iso-time.js';
import type { SimBackup, SimCloudProvider, SimWorkspace, Transition, UpgradeRequest } from './state.js';
import { CLOUD_PROVIDER_STATUS, workspaceStatusFields } from './status.js';
import type { SimStore } from './store.js';

export interface LifecycleOptions {
  /** How long every transition lasts. */
  transitionMs: number;
  clock: Clock;
  /** Called after a transition completes, e.g. to log it. */
  onComplete?: (transition: Transition) => void;
}

/**
 * The node groups after an upgrade: each group named in the request has the fields it gives
 * replaced, the others are kept; the prefetch list is replaced when given.
 */
export function mergeNodeGroups(
  current: NodeGroupConfig | null | undefined,
  requested: UpgradeRequest['node_group_config'],
) {
  const merged: NodeGroupConfig = { ...current };
  if (!requested) return merged;
  for (const name of NODE_GROUP_NAMES) {
    const group = requested[name];
    if (group) merged[name] = { ...merged[name], ...group };
  }
  if (requested.prefetch_image_list) merged.prefetch_image_list = requested.prefetch_image_list;
  return merged;
}

/** `component_versions` is a string; the simulator keeps it as JSON text of name → version. */
export function mergeComponentVersions(
  current: string | null | undefined,
  components: UpgradeRequest['components'],
) {
  let versions: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(current ?? '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      versions = parsed as Record<string, unknown>;
  } catch {
    // A hand-written state may hold free text here; an upgrade then starts from nothing.
  }
  for (const { name, version } of components ?? []) versions[name] = version;
  return JSON.stringify(versions);
}

/**
 * Timed transitions. Starting one sets the in-between status at once and records the
 * transition in the state (so a saved state carries it); a timer applies the end state.
 */
export class Lifecycle {
  readonly #timers = new Map<string, Timer>();

  constructor(
    readonly store: SimStore,
    readonly options: LifecycleOptions,
  ) {}

  pause(ws: SimWorkspace): Transition {
    this.#setWorkspaceStatus(ws, 'Stopping');
    return this.#begin({ kind: 'pause', workspace_id: ws.workspace_id, ...this.#timing() });
  }

  resume(ws: SimWorkspace): Transition {
    this.#setWorkspaceStatus(ws, 'Resuming');
    return this.#begin({ kind: 'resume', workspace_id: ws.workspace_id, ...this.#timing() });
  }

  restore(ws: SimWorkspace, backup: SimBackup): Transition {
    this.#setWorkspaceStatus(ws, 'Restoring');
    return this.#begin({
      kind: 'restore',
      workspace_id: ws.workspace_id,
      backup_id: backup.backup_id,
      vertex_count: backup.vertex_count,
      edge_count: backup.edge_count,
      ...this.#timing(),
    });
  }

  upgrade(cp: SimCloudProvider, request: UpgradeRequest): Transition {
    cp.status = CLOUD_PROVIDER_STATUS.upgrading;
    this.#touchProvider(cp);
    return this.#begin({ kind: 'upgrade', cloud_provider_id: cp.id, request, ...this.#timing() });
  }

  /** Arms a timer for every transition in the state, e.g. after loading a saved one. */
  scheduleAll(): void {
    for (const transition of this.store.state.transitions) this.#schedule(transition);
  }

  /** Applies a transition's end state now. Unknown ids (already completed) are ignored. */
  complete(id: string): void {
    const timer = this.#timers.get(id);
    timer?.cancel();
    this.#timers.delete(id);
    const { state } = this.store;
    const transition = state.transitions.find((t) => t.id === id);
    if (!transition) return;
    state.transitions = state.transitions.filter((t) => t.id !== id);
    this.#finish(transition);
    this.store.changed();
    this.options.onComplete?.(transition);
  }

  /** Stops every timer; transitions stay in the state, unfinished. */
  cancelAll(): void {
    for (const timer of this.#timers.values()) timer.cancel();
    this.#timers.clear();
  }

  #timing() {
    const now = this.options.clock.now();
    return {
      id: `tr-${randomUUID().slice(0, 8)}`,
      started_at: isoTime(now),
      completes_at: isoTime(now + this.options.transitionMs),
    };
  }

  #begin(transition: Transition): Transition {
    this.store.state.transitions.push(transition);
    this.store.changed();
    this.#schedule(transition);
    return transition;
  }

  #schedule(transition: Transition): void {
    const delay = Math.max(0, Date.parse(transition.completes_at) - this.options.clock.now());
    // a transition in progress does not keep a process up by itself
    const timer = this.options.clock.setTimer(delay, () => this.complete(transition.id), {
      keepAlive: false,
    });
    this.#timers.set(transition.id, timer);
  }

  #finish(transition: Transition): void {
    if (transition.kind === 'upgrade') {
      const cp = this.store.cloudProviders.get(transition.cloud_provider_id);
      if (!cp) return;
      const { request } = transition;
      cp.status = CLOUD_PROVIDER_STATUS.active;
      cp.component_versions = mergeComponentVersions(cp.component_versions, request.components);
      cp.node_group_config = mergeNodeGroups(cp.node_group_config, request.node_group_config);
      if (request.cluster_enabled_log_types) cp.cluster_enabled_log_types = request.cluster_enabled_log_types;
      this.#touchProvider(cp);
      return;
    }
    const ws = this.store.workspaces.get(transition.workspace_id);
    if (!ws) return;
    if (transition.kind === 'pause') {
      this.#setWorkspaceStatus(ws, 'Stopped');
    } else {
      if (transition.kind === 'restore') {
        ws.vertex_count = transition.vertex_count;
        ws.edge_count = transition.edge_count;
      }
      this.#setWorkspaceStatus(ws, 'Active');
    }
  }

  #setWorkspaceStatus(ws: SimWorkspace, status: Parameters<typeof workspaceStatusFields>[0]): void {
    Object.assign(ws, workspaceStatusFields(status));
    ws.last_modified_time = isoTime(this.options.clock.now());
    ws.version_number += 1;
  }

  #touchProvider(cp: SimCloudProvider): void {
    cp.updated_at = isoTime(this.options.clock.now());
    cp.version_number += 1;
  }
}

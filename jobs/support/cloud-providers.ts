import { z } from 'zod';
import {
  ApiError,
  type CloudProvider,
  NODE_GROUP_NAMES,
  type NodeGroup,
  type NodeGroupName,
  type Workgroup,
} from '../../src/api/index.js';
import type { PlanContext, TargetRef } from '../../src/engine/index.js';
import { NightshiftError } from '../../src/errors/index.js';
import { NotFoundInFleetError } from './by-name-or-id.js';

/**
 * The provider statuses the actions reason about. The spec leaves the values open; these are the
 * ones the simulator implements (docs/simulator.md): `Upgrading` during an upgrade, `Active` after.
 */
export const PROVIDER_STATUS = { active: 'Active', upgrading: 'Upgrading' } as const;

/**
 * The spec names no failure status. Platforms spell them `Error`, `Failed`, `UpgradeFailed`,
 * `CreateFailed`…: a status containing either word is read as one.
 */
const ERROR_STATUS = /error|fail/i;

export function isErrorStatus(status: string | null | undefined): boolean {
  return typeof status === 'string' && ERROR_STATUS.test(status);
}

/** `last_error` as a person should read it: blank means none. */
export function lastErrorOf(cp: CloudProvider): string | undefined {
  return cp.last_error?.trim() || undefined;
}

export const CloudProviderIdsSchema = z.array(z.string().min(1)).min(1).optional().meta({
  description:
    'Cloud provider ids to act on as well as (or, without a target, instead of) the providers of the target workgroups.',
});

/** A provider to act on, with what the fleet listing says about it. */
export interface ProviderTarget {
  id: string;
  /** From the listing (workgroups carry `cloud_provider_name`); undefined for a provider no workgroup uses. */
  name: string | undefined;
  /** Names of the workgroups bound to it, in the whole fleet. */
  workgroups: string[];
}

/** The job selects nothing to act on. */
export class NoCloudProvidersError extends NightshiftError {
  override name = 'NoCloudProvidersError';
  readonly code = 'NS_NO_CLOUD_PROVIDERS';
}

function describeProvider(workgroups: readonly Workgroup[], id: string): ProviderTarget {
  const using = workgroups.filter((wg) => wg.cloud_provider_id === id);
  return {
    id,
    name: using.find((wg) => wg.cloud_provider_name)?.cloud_provider_name ?? undefined,
    workgroups: using.map((wg) => wg.name ?? wg.workgroup_id ?? '?'),
  };
}

/**
 * The providers of the target workgroups and the ids given in `with:`, each once however many
 * workgroups share it, in the order first met.
 */
export function providerTargets(ctx: PlanContext, ids: readonly string[] | undefined): ProviderTarget[] {
  const targets = new Map<string, ProviderTarget>();
  const add = (id: string) => {
    if (!targets.has(id)) targets.set(id, describeProvider(ctx.fleet.workgroups, id));
  };
  for (const wg of ctx.workgroups) if (wg.cloudProviderId) add(wg.cloudProviderId);
  for (const id of ids ?? []) add(id);
  if (targets.size === 0) {
    throw new NoCloudProvidersError(
      'no cloud provider to act on: the target selects no workgroup bound to one, and with.cloudProviderIds names none',
    );
  }
  return [...targets.values()];
}

/** Keyed by the provider id, which stays when the provider is renamed. */
export function providerRef(target: { id: string }): TargetRef {
  return { key: target.id };
}

/** How a provider is named in reasons and findings. */
export function providerLabel(target: ProviderTarget, cp?: CloudProvider): string {
  return cp?.name ?? target.name ?? target.id;
}

/**
 * The spec types `component_versions` as a string without saying how it is written. The
 * simulator writes JSON text of `{ name: version }`; `name=version` (or `name:version`) pairs
 * separated by commas, semicolons or spaces are read too. Undefined when it is neither.
 */
export function parseComponentVersions(text: string | null | undefined): Record<string, string> | undefined {
  if (!text?.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      Object.values(parsed).every((version) => typeof version === 'string')
    ) {
      return parsed as Record<string, string>;
    }
    return undefined;
  } catch {
    // not JSON: try the pair form below
  }
  const versions: Record<string, string> = {};
  for (const part of text.trim().split(/[,;\s]+/)) {
    const pair = /^([^=:]+)[=:](.+)$/.exec(part);
    if (!pair) return undefined;
    versions[pair[1] as string] = pair[2] as string;
  }
  return versions;
}

export type NodeGroups = Partial<Record<NodeGroupName, NodeGroup>>;

function nodeGroupsOf(cp: CloudProvider): NodeGroups {
  const groups: NodeGroups = {};
  for (const name of NODE_GROUP_NAMES) {
    const group = cp.node_group_config?.[name];
    if (group) {
      groups[name] = {
        min_size: group.min_size ?? null,
        max_size: group.max_size ?? null,
        overprovisioning_factor: group.overprovisioning_factor ?? null,
      };
    }
  }
  return groups;
}

/**
 * What a provider's record says about its deployment, for step details and evidence. Credentials
 * and account details (`api_tokens`, `role_external_id`, `role_rn`) are left out on purpose.
 */
export function providerFacts(cp: CloudProvider) {
  const components = parseComponentVersions(cp.component_versions);
  return {
    name: cp.name ?? null,
    status: cp.status ?? null,
    version: cp.version ?? null,
    components: components ?? null,
    ...(components === undefined ? { componentVersionsText: cp.component_versions } : {}),
    nodeGroups: nodeGroupsOf(cp),
    logTypes: cp.cluster_enabled_log_types ?? [],
    lastError: lastErrorOf(cp) ?? null,
  };
}
export type ProviderFacts = ReturnType<typeof providerFacts>;

/** The providers the fleet listing names (through the workgroups bound to them), by id. */
function listedProviders(workgroups: readonly Workgroup[]): Map<string, string | undefined> {
  const listed = new Map<string, string | undefined>();
  for (const wg of workgroups) {
    const id = wg.cloud_provider_id;
    if (id && !listed.get(id)) listed.set(id, wg.cloud_provider_name ?? undefined);
  }
  return listed;
}

function byName(listed: Map<string, string | undefined>, name: string): string[] {
  return [...listed].filter(([, listedName]) => listedName === name).map(([id]) => id);
}

/** Where a `with:` reference to a provider leads; `listed: false` means only the API can tell. */
export interface ProviderReference {
  id: string;
  listed: boolean;
  /** The reference matched no provider, but `fallbackName` names exactly one: a rename already made. */
  foundByNewName: boolean;
  /** The names the listing knows, for a "not found" message. */
  known: string[];
}

/**
 * Resolves a provider reference against the fleet listing: an id first, then a name (shared by
 * two providers: refused, since renaming the wrong one is worse than not acting). A reference
 * the listing does not know is taken for the id of a provider no workgroup uses; the API says
 * whether it exists. When `fallbackName` is the name a rename gives, a reference to the old name
 * that now matches nothing leads to the one provider already carrying the new name, so running
 * a rename twice finds it done.
 */
export function resolveProviderReference(
  workgroups: readonly Workgroup[],
  ref: string,
  fallbackName?: string,
): ProviderReference {
  const listed = listedProviders(workgroups);
  const known = [...listed].map(([id, name]) => (name ? `${name} (${id})` : id));
  if (listed.has(ref)) return { id: ref, listed: true, foundByNewName: false, known };
  const named = byName(listed, ref);
  if (named.length > 1) {
    throw new NotFoundInFleetError(
      `cloud provider "${ref}" is ambiguous: ${named.length} share that name (${named.join(', ')}); give the id`,
    );
  }
  if (named[0]) return { id: named[0], listed: true, foundByNewName: false, known };
  const renamed = fallbackName === undefined ? [] : byName(listed, fallbackName);
  if (renamed.length === 1 && renamed[0])
    return { id: renamed[0], listed: true, foundByNewName: true, known };
  return { id: ref, listed: false, foundByNewName: false, known };
}

/** A 404 on a reference the listing did not know means it names nothing: say what is known. */
export function unknownProvider(ref: ProviderReference, written: string, error: unknown): unknown {
  if (ref.listed || !(error instanceof ApiError) || error.type !== 'Not-Found') return error;
  return new NotFoundInFleetError(
    `no cloud provider "${written}": neither a workgroup's cloud provider has that id or name nor does the API know that id (known: ${ref.known.join(', ') || 'none'})`,
  );
}

/** Whether two lists hold the same items, in any order (a provider's log types against a request's). */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((item) => set.has(item));
}

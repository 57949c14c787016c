import { z } from 'zod';
import { type Workgroup, WorkgroupSchema, WorkspaceSchema } from '../api/index.js';
import type { Logger } from '../log/index.js';
import type { FleetView } from './fleet.js';
import type { RunPart } from './run-parts.js';
import { errorRecord, type TargetRecord } from './summary.js';

/**
 * What a listing keeps of a workspace: what targeting, the console and the savings' prices read
 * (`workspace_type.typeName`). The rest of the API's answer (addons, statistics, agent settings)
 * is left out: a 10,000-workspace listing stays a few megabytes.
 */
const ListedWorkspaceSchema = WorkspaceSchema.pick({
  workspace_id: true,
  name: true,
  workgroup_id: true,
  workgroup_name: true,
  status: true,
  region: true,
  database_id: true,
  workspace_type: true,
});

const ListedWorkgroupSchema = WorkgroupSchema.pick({ workgroup_id: true, name: true, region: true }).extend({
  workspaces: z.array(ListedWorkspaceSchema).nullish(),
});

/** The fleet as a run last saw it, kept for readers that must not call the API (the console). */
export const FleetListingSchema = z.object({
  /** When the listing was asked for (ISO, UTC). */
  at: z.iso.datetime(),
  /** The ownership ledger's sequence read before it was asked for (see `ListingStamp`). */
  seq: z.number().int().nonnegative().optional(),
  runId: z.string(),
  job: z.string(),
  workgroups: z.array(ListedWorkgroupSchema),
});
export type FleetListing = z.infer<typeof FleetListingSchema>;

/** Where a run leaves the last listing it saw (src/store keeps it in Redis). */
export interface FleetListingSink {
  save(listing: FleetListing): Promise<void>;
}

/** The fields of `workgroups` a listing keeps (see ListedWorkspaceSchema). */
export function trimListing(workgroups: readonly Workgroup[]): FleetListing['workgroups'] {
  return workgroups.map((workgroup) => ({
    workgroup_id: workgroup.workgroup_id,
    name: workgroup.name,
    region: workgroup.region,
    workspaces: workgroup.workspaces?.map((ws) => ({
      workspace_id: ws.workspace_id,
      name: ws.name,
      workgroup_id: ws.workgroup_id,
      workgroup_name: ws.workgroup_name,
      status: ws.status,
      region: ws.region,
      database_id: ws.database_id,
      ...(ws.workspace_type ? { workspace_type: ws.workspace_type } : {}),
    })),
  }));
}

/**
 * Each part's slice of `listing`: the workspaces of its keys (`workgroupId/workspaceId`), by
 * workgroup, in one pass over the listing whatever the number of parts.
 */
export function sliceListing(listing: FleetListing, parts: readonly RunPart[]): Map<number, FleetListing> {
  const partOf = new Map<string, number>();
  for (const part of parts) for (const key of part.keys) partOf.set(key, part.index);
  const byPart = new Map<number, FleetListing['workgroups']>(parts.map((part) => [part.index, []]));
  for (const workgroup of listing.workgroups) {
    const mine = new Map<number, z.infer<typeof ListedWorkspaceSchema>[]>();
    for (const ws of workgroup.workspaces ?? []) {
      const index = partOf.get(`${workgroup.workgroup_id}/${ws.workspace_id}`);
      if (index === undefined) continue;
      const list = mine.get(index);
      if (list) list.push(ws);
      else mine.set(index, [ws]);
    }
    for (const [index, workspaces] of mine) byPart.get(index)?.push({ ...workgroup, workspaces });
  }
  return new Map([...byPart].map(([index, workgroups]) => [index, { ...listing, workgroups }]));
}

/**
 * Leaves the fleet as the run leaves it where readers that make no API call find it (the
 * console): the run's last listing, with the status each target's record says the run left its
 * workspace in (a pause the API accepted: `Stopping`), so the console never shows the fleet from
 * before the run acted. No second listing: a split run's parts acted on other workers, and their
 * records carry their statuses all the same.
 */
export async function leaveListing(
  listings: FleetListingSink,
  fleet: FleetView,
  run: { runId: string; job: string; targets: readonly TargetRecord[] },
  log: Logger,
): Promise<void> {
  const left = new Map<string, string>();
  for (const target of run.targets) if (target.status) left.set(target.key, target.status);
  const workgroups = trimListing(fleet.workgroups);
  if (left.size > 0)
    for (const workgroup of workgroups)
      for (const ws of workgroup.workspaces ?? []) {
        const status = left.get(`${workgroup.workgroup_id}/${ws.workspace_id}`);
        if (status !== undefined) ws.status = status;
      }
  try {
    await listings.save({ at: fleet.listedAt.toISOString(), runId: run.runId, job: run.job, workgroups });
  } catch (error) {
    log.warn({ err: errorRecord(error) }, 'could not save the fleet listing the run saw; its outcome stands');
  }
}

import { z } from 'zod';
import { type Workgroup, WorkgroupSchema, WorkspaceSchema } from '../api/index.js';

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

/** The part of `listing` that holds the workspaces of `keys` (`workgroupId/workspaceId`), by workgroup. */
export function sliceListing(listing: FleetListing, keys: Iterable<string>): FleetListing {
  const wanted = new Set(keys);
  const workgroups = listing.workgroups.flatMap((workgroup) => {
    const workspaces = (workgroup.workspaces ?? []).filter((ws) =>
      wanted.has(`${workgroup.workgroup_id}/${ws.workspace_id}`),
    );
    return workspaces.length > 0 ? [{ ...workgroup, workspaces }] : [];
  });
  return { ...listing, workgroups };
}

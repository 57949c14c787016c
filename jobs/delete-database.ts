import { z } from 'zod';
import type { Database, Workgroup } from '../src/api/index.js';
import {
  type Action,
  idempotentStep,
  type PlanContext,
  type StepResult,
  type TargetRef,
} from '../src/engine/index.js';
import { NightshiftError } from '../src/errors/index.js';
import { rewordApiError } from './support/api-errors.js';
import { findDatabase, findWorkgroup, type Named } from './support/by-name-or-id.js';

const params = z.strictObject({
  workgroup: z.string().min(1).meta({ description: 'The workgroup holding the database, by name or id.' }),
  database: z.string().min(1).meta({ description: 'The database to delete, by name or id.' }),
  force: z.boolean().default(false).meta({
    description:
      'Ask the API to delete the database even though workspaces are attached to it. The API decides: the simulator refuses (400).',
    default: false,
  }),
});
type Params = z.output<typeof params>;

/** A database that still has workspaces, which this action leaves alone without `force: true`. */
export class DatabaseInUseError extends NightshiftError {
  override name = 'DatabaseInUseError';
  readonly code = 'NS_DATABASE_IN_USE';
}

/** The run fails such a target, and so does the plan. */
function refuseInUse(db: Named<Database>, attached: Map<string, string>): never {
  throw new DatabaseInUseError(
    `database "${db.name}" (${db.id}) still has ${describeAttached(attached)}; delete or move them first, or set force: true to ask the API anyway`,
  );
}

/**
 * The workspaces attached to a database, by id with their names: the database's own `workspaces`
 * and the workgroup's workspaces pointing at it, since the spec shows the first without fields
 * and either may be left out.
 */
function attachedWorkspaces(wg: Named<Workgroup>, db: Named<Database>): Map<string, string> {
  const attached = new Map<string, string>();
  for (const entry of db.record.workspaces ?? []) {
    const id = entry.workspace_id;
    if (typeof id === 'string') attached.set(id, typeof entry.name === 'string' ? entry.name : id);
  }
  for (const ws of wg.record.workspaces ?? []) {
    if (ws.database_id === db.id && ws.workspace_id)
      attached.set(ws.workspace_id, ws.name ?? ws.workspace_id);
  }
  return attached;
}

function describeAttached(attached: Map<string, string>): string {
  const list = [...attached].map(([id, name]) => (id === name ? id : `${name} (${id})`)).join(', ');
  return `${attached.size} workspace(s) attached: ${list}`;
}

/** Keyed by the reference as written, so the key stays the same after the database is gone. */
function databaseRef(ref: string) {
  return (wg: Named<Workgroup>): TargetRef => ({
    key: `${wg.id}/${ref}`,
    workgroupId: wg.id,
    workgroupName: wg.name,
  });
}

/** The workgroup as the latest listing shows it: the run's on a first attempt, a fresh one on a retry. */
async function currentWorkgroup(ctx: PlanContext, ref: string, fresh: boolean): Promise<Named<Workgroup>> {
  if (fresh) await ctx.fleet.refresh();
  return findWorkgroup(ctx.fleet.workgroups, ref);
}

const alreadyDeleted = (database: string): StepResult => ({
  outcome: 'skipped',
  reason: `already deleted: no database "${database}" in the listing`,
});

/** Deletes one database; refuses one that still has workspaces unless `force: true`. */
export const deleteDatabase: Action<typeof params> = {
  name: 'delete-database',
  description: 'Delete a database that no workspace uses any more; a database already gone is skipped.',
  destructive: true,
  stopAfter: { failures: 1 },
  scope: 'none',
  params,
  example: `version: 1
jobs:
  drop-archive:
    description: Delete the archive database of prod-core once its workspaces are gone
    schedule: "0 4 1 * *"
    action: delete-database
    confirm: true
    with:
      workgroup: prod-core
      database: archive
`,

  async plan(ctx, { workgroup, database, force }: Params) {
    const wg = findWorkgroup(ctx.fleet.workgroups, workgroup);
    await ctx.forEachTarget([wg], databaseRef(database), async () => {
      const db = findDatabase(wg, database);
      if (!db) return alreadyDeleted(database);
      const attached = attachedWorkspaces(wg, db);
      if (attached.size === 0)
        return { outcome: 'planned', reason: `would delete database "${db.name}" (${db.id})` };
      return force
        ? {
            outcome: 'planned',
            reason: `would ask the API to delete database "${db.name}" with ${describeAttached(attached)} (force: true); an API that refuses this, as the simulator does, fails the target`,
          }
        : refuseInUse(db, attached);
    });
  },

  async run(ctx, { workgroup, database, force }: Params) {
    const listed = findWorkgroup(ctx.fleet.workgroups, workgroup);
    await ctx.forEachTarget([listed], databaseRef(database), async (_, step) => {
      const wg = await currentWorkgroup(ctx, listed.id, step.attempt > 1);
      const db = findDatabase(wg, database);
      if (!db) return alreadyDeleted(database);
      const attached = attachedWorkspaces(wg, db);
      if (attached.size > 0 && !force) refuseInUse(db, attached);
      // A refusal because it is already gone (deleted by someone else meanwhile) is not a failure.
      const outcome = await idempotentStep({
        attempt: () => ctx.api.deleteDatabase(wg.id, db.id, { signal: step.signal }),
        isDone: async () => !findDatabase(await currentWorkgroup(ctx, wg.id, true), db.id),
        notDone: (refusal) =>
          attached.size === 0
            ? refusal
            : rewordApiError(refusal, {
                details: refusal.details,
                reason: `force: true only skips nightshift's own check; the API itself refused to delete database "${db.name}" with ${describeAttached(attached)}: ${refusal.details[0]?.Reason ?? refusal.message}`,
              }),
      });
      if (outcome.already) return alreadyDeleted(database);
      return {
        outcome: 'succeeded',
        detail: {
          databaseId: db.id,
          databaseName: db.name,
          ...(attached.size > 0 ? { forcedWithWorkspaces: [...attached.keys()] } : {}),
        },
      };
    });
  },
};

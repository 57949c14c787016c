import type { Database, Workgroup, Workspace } from '../../src/api/index.js';
import { NightshiftError } from '../../src/errors/index.js';

/** A `with:` reference that names nothing in the fleet, or more than one thing. */
export class NotFoundInFleetError extends NightshiftError {
  override name = 'NotFoundInFleetError';
  readonly code = 'NS_NOT_FOUND_IN_FLEET';
}

/** A listed item with the id the API needs and a name for messages (the id when it has none). */
export interface Named<T> {
  id: string;
  name: string;
  record: T;
}

function named<T>(items: readonly T[], id: (item: T) => unknown, name: (item: T) => unknown): Named<T>[] {
  return items.flatMap((record) => {
    const itemId = id(record);
    if (typeof itemId !== 'string') return [];
    const itemName = name(record);
    return [{ id: itemId, name: typeof itemName === 'string' ? itemName : itemId, record }];
  });
}

/**
 * The item whose id is `ref`, else the one whose name is; ids win so a name that looks like
 * another item's id still finds that item. Undefined when none matches; throws when a name is
 * shared, since acting on the wrong one of two is worse than not acting.
 */
function pick<T>(items: readonly Named<T>[], ref: string, what: string, where = ''): Named<T> | undefined {
  const byId = items.find((item) => item.id === ref);
  if (byId) return byId;
  const byName = items.filter((item) => item.name === ref);
  if (byName.length > 1) {
    const ids = byName.map((item) => item.id).join(', ');
    throw new NotFoundInFleetError(
      `${what} "${ref}"${where} is ambiguous: ${byName.length} share that name (${ids}); give the id`,
    );
  }
  return byName[0];
}

function notFound(
  items: readonly Named<unknown>[],
  ref: string,
  what: string,
  where = '',
): NotFoundInFleetError {
  const known = items.map((item) => item.name).join(', ');
  return new NotFoundInFleetError(`no ${what} "${ref}"${where} (known: ${known || 'none'})`);
}

/** The workgroup `ref` names (by id or name); throws naming the known workgroups when none does. */
export function findWorkgroup(workgroups: readonly Workgroup[], ref: string): Named<Workgroup> {
  const items = named(
    workgroups,
    (wg) => wg.workgroup_id,
    (wg) => wg.name,
  );
  const found = pick(items, ref, 'workgroup');
  if (!found) throw notFound(items, ref, 'workgroup');
  return found;
}

/** The workspace `ref` names in the workgroup; throws naming the workgroup's workspaces when none does. */
export function findWorkspace(workgroup: Named<Workgroup>, ref: string): Named<Workspace> {
  const items = named(
    workgroup.record.workspaces ?? [],
    (ws) => ws.workspace_id,
    (ws) => ws.name,
  );
  const where = ` in workgroup "${workgroup.name}"`;
  const found = pick(items, ref, 'workspace', where);
  if (!found) throw notFound(items, ref, 'workspace', where);
  return found;
}

/** The database `ref` names in the workgroup, or undefined when the listing shows none by that id or name. */
export function findDatabase(workgroup: Named<Workgroup>, ref: string): Named<Database> | undefined {
  const items = named(
    workgroup.record.svc_databases ?? [],
    (db) => db.database_id,
    (db) => db.name,
  );
  return pick(items, ref, 'database', ` in workgroup "${workgroup.name}"`);
}

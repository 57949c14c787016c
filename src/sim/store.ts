import type {
  SimBackup,
  SimCloudProvider,
  SimDatabase,
  SimDbUser,
  SimState,
  SimWorkgroup,
  SimWorkspace,
} from './state.js';

/**
 * Holds the state with an index per resource kind. Handlers change records in place and
 * then call `changed()`: the revision it bumps is what invalidates every cached rendering.
 */
export class SimStore {
  #state!: SimState;
  #revision = 0;
  readonly workgroups = new Map<string, SimWorkgroup>();
  readonly workspaces = new Map<string, SimWorkspace>();
  readonly databases = new Map<string, SimDatabase>();
  readonly cloudProviders = new Map<string, SimCloudProvider>();
  readonly backups = new Map<string, SimBackup>();

  constructor(state: SimState) {
    this.replace(state);
  }

  get state(): SimState {
    return this.#state;
  }

  get revision(): number {
    return this.#revision;
  }

  replace(state: SimState): void {
    this.#state = state;
    this.#reindex();
    this.changed();
  }

  changed(): void {
    this.#revision++;
  }

  dbUsersOf(workspaceId: string): SimDbUser[] {
    return this.#state.dbUsers.filter((user) => user.workspace_id === workspaceId);
  }

  addDbUser(user: SimDbUser): void {
    this.#state.dbUsers.push(user);
    this.changed();
  }

  removeBackup(backupId: string): void {
    this.#state.backups = this.#state.backups.filter((backup) => backup.backup_id !== backupId);
    this.backups.delete(backupId);
    this.changed();
  }

  removeDatabase(databaseId: string): void {
    this.#state.databases = this.#state.databases.filter((db) => db.database_id !== databaseId);
    this.databases.delete(databaseId);
    this.changed();
  }

  #reindex(): void {
    const fill = <T>(map: Map<string, T>, items: T[], idOf: (item: T) => string) => {
      map.clear();
      for (const item of items) map.set(idOf(item), item);
    };
    fill(this.workgroups, this.#state.workgroups, (wg) => wg.workgroup_id);
    fill(this.workspaces, this.#state.workspaces, (ws) => ws.workspace_id);
    fill(this.databases, this.#state.databases, (db) => db.database_id);
    fill(this.cloudProviders, this.#state.cloudProviders, (cp) => cp.id);
    fill(this.backups, this.#state.backups, (backup) => backup.backup_id);
  }
}

import type { z } from 'zod';
import { parserFor } from './result-parser.js';
import {
  AllowListEntrySchema,
  CloudProviderSchema,
  type CloudProviderUpdate,
  type CloudProviderUpgrade,
  CurrentIpSchema,
  type DbUserCredentials,
  DbUserSchema,
  DeclaredResultSchema,
  OrgUserSchema,
  WorkgroupSchema,
} from './schemas.js';
import { type ApiClientOptions, type CallOptions, Transport } from './transport.js';

const V2 = '/controller/v4/v2';

const WorkgroupListSchema = WorkgroupSchema.array();
const AllowListSchema = AllowListEntrySchema.array();
const OrgUserListSchema = OrgUserSchema.array();

/** Every operation's result schema. */
const RESULT_SCHEMAS: readonly z.ZodType[] = [
  AllowListSchema,
  CloudProviderSchema,
  CurrentIpSchema,
  DbUserSchema,
  DeclaredResultSchema,
  OrgUserListSchema,
  WorkgroupListSchema,
];

/** Builds a path with every parameter URL-encoded. */
function path(strings: TemplateStringsArray, ...params: string[]): string {
  return strings.reduce(
    (out, part, i) => out + part + (i < params.length ? encodeURIComponent(params[i] ?? '') : ''),
    '',
  );
}

/**
 * The typed client of the Cloud Workspace Management API: one method per operation, each
 * resolving `{ result, requestId, message }` or rejecting with an {@link ApiError} that says
 * whether a retry can help. The client never retries: the worker owns retries. How a call
 * travels (credentials, time limit, error mapping) is the {@link Transport}'s.
 */
export class ApiClient {
  readonly #transport: Transport;

  constructor(options: ApiClientOptions) {
    this.#transport = new Transport(options);
  }

  /**
   * Builds every operation's result parser now. Each is otherwise compiled on its operation's
   * first call, about 200 ms in all, which a worker would pay when a burst of runs starts
   * together; a long-running process calls this once at start.
   */
  static prepare(): void {
    for (const schema of RESULT_SCHEMAS) parserFor(schema);
  }

  /** Closes the connections the client opened. */
  async close(): Promise<void> {
    await this.#transport.close();
  }

  /** 1. Restore a backup into a workspace. */
  restoreBackup(workgroupId: string, workspaceId: string, backupId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'restoreBackup',
        method: 'POST',
        path: V2 + path`/workgroups/${workgroupId}/workspaces/${workspaceId}/backups/restore`,
        body: { backup_id: backupId },
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 2. Delete a backup (a DELETE that carries a JSON body). */
  deleteBackup(workgroupId: string, workspaceId: string, backupId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'deleteBackup',
        method: 'DELETE',
        path: V2 + path`/workgroups/${workgroupId}/workspaces/${workspaceId}/backups`,
        body: { backup_id: backupId },
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 3. Create an in-database user. */
  createDbUser(workgroupId: string, workspaceId: string, user: DbUserCredentials, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'createDbUser',
        method: 'POST',
        path: V2 + path`/workgroups/${workgroupId}/workspaces/${workspaceId}/dbuser`,
        body: { username: user.username, password: user.password },
        result: DbUserSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 4. Update an in-database user's password. */
  updateDbUserPassword(
    workgroupId: string,
    workspaceId: string,
    user: DbUserCredentials,
    options?: CallOptions,
  ) {
    return this.#transport.call(
      {
        operation: 'updateDbUserPassword',
        method: 'PUT',
        path: V2 + path`/workgroups/${workgroupId}/workspaces/${workspaceId}/dbuser`,
        body: { username: user.username, password: user.password },
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 5. Rename a cloud provider or record a version against it (changes nothing deployed). */
  updateCloudProvider(cloudProviderId: string, update: CloudProviderUpdate, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'updateCloudProvider',
        method: 'PUT',
        path: V2 + path`/cloud-providers/${cloudProviderId}`,
        body: update,
        result: CloudProviderSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 6. Get a cloud provider's details. */
  getCloudProvider(cloudProviderId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'getCloudProvider',
        method: 'GET',
        path: V2 + path`/cloud-providers/${cloudProviderId}`,
        result: CloudProviderSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 7. Upgrade a cloud provider's components, node groups and log types. */
  upgradeCloudProvider(cloudProviderId: string, upgrade: CloudProviderUpgrade, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'upgradeCloudProvider',
        method: 'PUT',
        path: V2 + path`/cloud-providers/${cloudProviderId}/upgrade`,
        body: upgrade,
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 8. List workgroups, with their databases and workspaces (and each workspace's status). */
  listWorkgroups(options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'listWorkgroups',
        method: 'GET',
        path: `${V2}/workgroups`,
        result: WorkgroupListSchema,
        auth: 'apiKey',
        list: true,
      },
      options,
    );
  }

  /** 9. List a workgroup's allowed IPs. */
  listAllowedIps(workgroupId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'listAllowedIps',
        method: 'GET',
        path: V2 + path`/workgroups/${workgroupId}/allow_list`,
        result: AllowListSchema,
        auth: 'apiKey',
        list: true,
      },
      options,
    );
  }

  /** 10. Check whether the caller's current IP is allowed; reads `" IsAllowed"` and `IsAllowed`. */
  checkCurrentIp(workgroupId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'checkCurrentIp',
        method: 'GET',
        path: V2 + path`/workgroups/${workgroupId}/allow_list/current`,
        result: CurrentIpSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 11. Disable IP allow-list enforcement for a workgroup. */
  disableAllowList(workgroupId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'disableAllowList',
        method: 'PUT',
        path: V2 + path`/workgroups/${workgroupId}/allow_list/disable`,
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 12. List the organization's users: bearer-token auth, no envelope, one object or an array. */
  listOrgUsers(options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'listOrgUsers',
        method: 'GET',
        path: '/users',
        result: OrgUserListSchema,
        auth: 'bearer',
        bare: true,
      },
      options,
    );
  }

  /** 13. Resume a paused workspace. */
  resumeWorkspace(workgroupId: string, workspaceId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'resumeWorkspace',
        method: 'POST',
        path: V2 + path`/workgroups/${workgroupId}/workspaces/${workspaceId}/resume`,
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 14. Pause a workspace. */
  pauseWorkspace(workgroupId: string, workspaceId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'pauseWorkspace',
        method: 'POST',
        path: V2 + path`/workgroups/${workgroupId}/workspaces/${workspaceId}/pause`,
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }

  /** 15. Delete a database. */
  deleteDatabase(workgroupId: string, databaseId: string, options?: CallOptions) {
    return this.#transport.call(
      {
        operation: 'deleteDatabase',
        method: 'DELETE',
        path: V2 + path`/workgroups/${workgroupId}/databases/${databaseId}`,
        result: DeclaredResultSchema,
        auth: 'apiKey',
      },
      options,
    );
  }
}

import type { z } from 'zod';
import { OPERATIONS, type Operation, type OperationName, operationPath } from './operations.js';
import { parserFor } from './result-parser.js';
import {
  type CloudProviderUpdate,
  type CloudProviderUpgrade,
  type DbUserCredentials,
  EnvelopeSchema,
} from './schemas.js';
import { type ApiClientOptions, type ApiResponse, type CallOptions, Transport } from './transport.js';

/** What an operation's call resolves to: its Result as its schema gives it. */
type Answer<N extends OperationName> = Promise<ApiResponse<z.output<(typeof OPERATIONS)[N]['result']>>>;

/**
 * The typed client of the Cloud Workspace Management API: one method per operation of the
 * operation table (src/api/operations.ts), each resolving `{ result, requestId, message }` or
 * rejecting with an {@link ApiError} that says whether a retry can help. The client never
 * retries: the worker owns retries. How a call travels (credentials, time limit, error mapping)
 * is the {@link Transport}'s.
 */
export class ApiClient {
  readonly #transport: Transport;

  constructor(options: ApiClientOptions) {
    this.#transport = new Transport(options);
  }

  /**
   * Builds the envelope's and every operation's result parser now. Each is otherwise compiled on its
   * first use, about 200 ms in all, which a worker would pay when a burst of runs starts
   * together; a long-running process calls this once at start.
   */
  static prepare(): void {
    parserFor(EnvelopeSchema);
    for (const operation of Object.values(OPERATIONS)) parserFor(operation.result);
  }

  /** Closes the connections the client opened. */
  async close(): Promise<void> {
    await this.#transport.close();
  }

  /** Calls `operation` as the table describes it, its path parameters (the spec's names) filled in. */
  #call<N extends OperationName>(
    operation: N,
    params: Readonly<Record<string, string>>,
    options: CallOptions | undefined,
    body?: unknown,
  ): Answer<N> {
    const described: Operation = OPERATIONS[operation];
    return this.#transport.call(
      { ...described, operation, path: operationPath(operation, params), body },
      options,
    ) as Answer<N>;
  }

  /** 1. Restore a backup into a workspace. */
  restoreBackup(workgroupId: string, workspaceId: string, backupId: string, options?: CallOptions) {
    return this.#call('restoreBackup', { workgroupID: workgroupId, workspaceID: workspaceId }, options, {
      backup_id: backupId,
    });
  }

  /** 2. Delete a backup (a DELETE that carries a JSON body). */
  deleteBackup(workgroupId: string, workspaceId: string, backupId: string, options?: CallOptions) {
    return this.#call('deleteBackup', { workgroupID: workgroupId, workspaceID: workspaceId }, options, {
      backup_id: backupId,
    });
  }

  /** 3. Create an in-database user. */
  createDbUser(workgroupId: string, workspaceId: string, user: DbUserCredentials, options?: CallOptions) {
    return this.#call('createDbUser', { workgroupID: workgroupId, workspaceID: workspaceId }, options, {
      username: user.username,
      password: user.password,
    });
  }

  /** 4. Update an in-database user's password. */
  updateDbUserPassword(
    workgroupId: string,
    workspaceId: string,
    user: DbUserCredentials,
    options?: CallOptions,
  ) {
    return this.#call(
      'updateDbUserPassword',
      { workgroupID: workgroupId, workspaceID: workspaceId },
      options,
      { username: user.username, password: user.password },
    );
  }

  /** 5. Rename a cloud provider or record a version against it (changes nothing deployed). */
  updateCloudProvider(cloudProviderId: string, update: CloudProviderUpdate, options?: CallOptions) {
    return this.#call('updateCloudProvider', { cloudProviderID: cloudProviderId }, options, update);
  }

  /** 6. Get a cloud provider's details. */
  getCloudProvider(cloudProviderId: string, options?: CallOptions) {
    return this.#call('getCloudProvider', { cloudProviderID: cloudProviderId }, options);
  }

  /** 7. Upgrade a cloud provider's components, node groups and log types. */
  upgradeCloudProvider(cloudProviderId: string, upgrade: CloudProviderUpgrade, options?: CallOptions) {
    return this.#call('upgradeCloudProvider', { cloudProviderID: cloudProviderId }, options, upgrade);
  }

  /** 8. List workgroups, with their databases and workspaces (and each workspace's status). */
  listWorkgroups(options?: CallOptions) {
    return this.#call('listWorkgroups', {}, options);
  }

  /** 9. List a workgroup's allowed IPs. */
  listAllowedIps(workgroupId: string, options?: CallOptions) {
    return this.#call('listAllowedIps', { workgroupID: workgroupId }, options);
  }

  /** 10. Check whether the caller's current IP is allowed; reads `" IsAllowed"` and `IsAllowed`. */
  checkCurrentIp(workgroupId: string, options?: CallOptions) {
    return this.#call('checkCurrentIp', { workgroupID: workgroupId }, options);
  }

  /** 11. Disable IP allow-list enforcement for a workgroup. */
  disableAllowList(workgroupId: string, options?: CallOptions) {
    return this.#call('disableAllowList', { workgroupID: workgroupId }, options);
  }

  /** 12. List the organization's users: bearer-token auth, no envelope, one object or an array. */
  listOrgUsers(options?: CallOptions) {
    return this.#call('listOrgUsers', {}, options);
  }

  /** 13. Resume a paused workspace. */
  resumeWorkspace(workgroupId: string, workspaceId: string, options?: CallOptions) {
    return this.#call('resumeWorkspace', { workgroupID: workgroupId, workspaceID: workspaceId }, options);
  }

  /** 14. Pause a workspace. */
  pauseWorkspace(workgroupId: string, workspaceId: string, options?: CallOptions) {
    return this.#call('pauseWorkspace', { workgroupID: workgroupId, workspaceID: workspaceId }, options);
  }

  /** 15. Delete a database. */
  deleteDatabase(workgroupId: string, databaseId: string, options?: CallOptions) {
    return this.#call('deleteDatabase', { workgroupID: workgroupId, databaseID: databaseId }, options);
  }
}

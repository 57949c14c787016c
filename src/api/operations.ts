import type { z } from 'zod';
import type { HttpMethod } from './response.js';
import {
  AllowListEntrySchema,
  CloudProviderSchema,
  CurrentIpSchema,
  DbUserSchema,
  DeclaredResultSchema,
  OrgUserSchema,
  WorkgroupSchema,
} from './schemas.js';

/** How an operation authenticates: the `x-api-key` header, or `Authorization: Bearer` (list org users only). */
export type AuthScheme = 'apiKey' | 'bearer';

/** One operation of the API, as the client calls it and the simulator serves it. */
export interface Operation {
  method: HttpMethod;
  /** The spec's path; its parameters as `:name`, the spec's names (Fastify routes by the same syntax). */
  path: string;
  auth: AuthScheme;
  /** What its Result must be. */
  result: z.ZodType;
  /** It changes something: a plan or a dry run never calls it (`ReadOnlyApi`). */
  writes: boolean;
  /** It answers a bare body instead of the envelope (list org users). */
  bare?: true;
  /** A list whose null or missing Result means "none". */
  list?: true;
}

const V2 = '/controller/v4/v2';
const WORKGROUP = `${V2}/workgroups/:workgroupID`;
const WORKSPACE = `${WORKGROUP}/workspaces/:workspaceID`;
const CLOUD_PROVIDER = `${V2}/cloud-providers/:cloudProviderID`;

/**
 * The 15 operations of the management API, in the spec's order, named like the client's methods:
 * the client (src/api/client.ts), the simulator's routes, `ReadOnlyApi` and the tests' lists are
 * derived from this table. Adding an operation is a row here, its client method and its
 * simulator behaviour (src/sim/operations/).
 */
export const OPERATIONS = {
  restoreBackup: {
    method: 'POST',
    path: `${WORKSPACE}/backups/restore`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
  deleteBackup: {
    method: 'DELETE',
    path: `${WORKSPACE}/backups`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
  createDbUser: {
    method: 'POST',
    path: `${WORKSPACE}/dbuser`,
    auth: 'apiKey',
    result: DbUserSchema,
    writes: true,
  },
  updateDbUserPassword: {
    method: 'PUT',
    path: `${WORKSPACE}/dbuser`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
  updateCloudProvider: {
    method: 'PUT',
    path: CLOUD_PROVIDER,
    auth: 'apiKey',
    result: CloudProviderSchema,
    writes: true,
  },
  getCloudProvider: {
    method: 'GET',
    path: CLOUD_PROVIDER,
    auth: 'apiKey',
    result: CloudProviderSchema,
    writes: false,
  },
  upgradeCloudProvider: {
    method: 'PUT',
    path: `${CLOUD_PROVIDER}/upgrade`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
  listWorkgroups: {
    method: 'GET',
    path: `${V2}/workgroups`,
    auth: 'apiKey',
    result: WorkgroupSchema.array(),
    writes: false,
    list: true,
  },
  listAllowedIps: {
    method: 'GET',
    path: `${WORKGROUP}/allow_list`,
    auth: 'apiKey',
    result: AllowListEntrySchema.array(),
    writes: false,
    list: true,
  },
  checkCurrentIp: {
    method: 'GET',
    path: `${WORKGROUP}/allow_list/current`,
    auth: 'apiKey',
    result: CurrentIpSchema,
    writes: false,
  },
  disableAllowList: {
    method: 'PUT',
    path: `${WORKGROUP}/allow_list/disable`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
  listOrgUsers: {
    method: 'GET',
    path: '/users',
    auth: 'bearer',
    result: OrgUserSchema.array(),
    writes: false,
    bare: true,
  },
  resumeWorkspace: {
    method: 'POST',
    path: `${WORKSPACE}/resume`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
  pauseWorkspace: {
    method: 'POST',
    path: `${WORKSPACE}/pause`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
  deleteDatabase: {
    method: 'DELETE',
    path: `${WORKGROUP}/databases/:databaseID`,
    auth: 'apiKey',
    result: DeclaredResultSchema,
    writes: true,
  },
} as const satisfies Record<string, Operation>;

export type OperationName = keyof typeof OPERATIONS;

/** Every operation's name, in the spec's order. */
export const OPERATION_NAMES = Object.keys(OPERATIONS) as [OperationName, ...OperationName[]];

/** The operations that change nothing. */
export type ReadOperationName = {
  [N in OperationName]: (typeof OPERATIONS)[N]['writes'] extends false ? N : never;
}[OperationName];

/** The operations that change nothing: all a plan or a dry run may call. */
export const READ_OPERATIONS = OPERATION_NAMES.filter(
  (name): name is ReadOperationName => !OPERATIONS[name].writes,
);

/** A path template split once: its literal text, and between each two pieces the name of a parameter. */
interface PathTemplate {
  readonly texts: readonly string[];
  readonly names: readonly string[];
}

const templates = new Map<OperationName, PathTemplate>();

function templateOf(operation: OperationName): PathTemplate {
  let template = templates.get(operation);
  if (!template) {
    // a split on the names keeps them: text, name, text, …, text
    const pieces = OPERATIONS[operation].path.split(/:(\w+)/);
    template = {
      texts: pieces.filter((_, index) => index % 2 === 0),
      names: pieces.filter((_, index) => index % 2 === 1),
    };
    templates.set(operation, template);
  }
  return template;
}

/**
 * `operation`'s path with `params` in place of its `:name`s, each URL-encoded. The template is
 * split on the operation's first call, not matched again on each (a fleet pause builds 10,000).
 */
export function operationPath(
  operation: OperationName,
  params: Readonly<Record<string, string>> = {},
): string {
  const { texts, names } = templateOf(operation);
  let path = texts[0] as string;
  for (let index = 0; index < names.length; index++) {
    const name = names[index] as string;
    const value = params[name];
    if (value === undefined) throw new TypeError(`${operation}: path parameter ${name} is missing`);
    path += encodeURIComponent(value) + (texts[index + 1] as string);
  }
  return path;
}

import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher, request } from 'undici';
import type { z } from 'zod';
import { ApiError, type ApiErrorKind, typeForStatus } from './errors.js';
import { createResultParser, type ParseOutcome } from './result-parser.js';
import {
  AllowListEntrySchema,
  CloudProviderSchema,
  type CloudProviderUpdate,
  type CloudProviderUpgrade,
  CurrentIpSchema,
  type DbUserCredentials,
  DbUserSchema,
  DeclaredResultSchema,
  EnvelopeSchema,
  type ErrorDetail,
  OrgUserSchema,
  WorkgroupSchema,
} from './schemas.js';

export interface ApiClientOptions {
  /** Base URL of the API, with or without a trailing slash. */
  baseUrl: string;
  /** Sent as `x-api-key` on every operation but `listOrgUsers`. */
  apiKey: string;
  /** Sent as `Authorization: Bearer` by `listOrgUsers`, the one operation that refuses API keys. */
  bearerToken?: string | undefined;
  /** Per-call time limit covering connect, headers and body. Default 30 000 ms. */
  timeoutMs?: number | undefined;
  /** Called once per call, after it ends, success or failure. Never given a credential. */
  onCall?: ((call: ApiCallRecord) => void) | undefined;
  /** The undici dispatcher to use. Default: a keep-alive Agent owned (and closed) by the client. */
  dispatcher?: Dispatcher | undefined;
  /** Awaited before every request, e.g. a rate limiter shared by every worker. */
  beforeCall?: ((operation: string, signal: AbortSignal) => Promise<void>) | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

export interface ApiResponse<T> {
  result: T;
  /** The envelope's RequestID; undefined where the operation answers without an envelope. */
  requestId: string | undefined;
  /** The envelope's Message; undefined where the operation answers without an envelope. */
  message: string | undefined;
}

export interface ApiCallRecord {
  operation: string;
  method: string;
  path: string;
  status: number | undefined;
  requestId: string | undefined;
  durationMs: number;
  error?: ApiError;
}

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface CallSpec<S extends z.ZodType> {
  operation: string;
  method: HttpMethod;
  path: string;
  body?: unknown;
  result: S;
  auth: 'apiKey' | 'bearer';
  /** The operation answers a bare body instead of the envelope (list org users). */
  bare?: boolean;
  /** A list operation whose null or missing Result means "none". */
  list?: boolean;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const SNIPPET_LENGTH = 120;
const V2 = '/controller/v4/v2';

const WorkgroupListSchema = WorkgroupSchema.array();
const AllowListSchema = AllowListEntrySchema.array();
const OrgUserListSchema = OrgUserSchema.array();

/** One parser per result schema, built on first use, or all at once by `ApiClient.prepare()`. */
const parsers = new Map<z.ZodType, (input: unknown) => ParseOutcome<unknown>>();

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
function parserFor<S extends z.ZodType>(schema: S): (input: unknown) => ParseOutcome<z.output<S>> {
  let parser = parsers.get(schema);
  if (!parser) {
    parser = createResultParser(schema);
    parsers.set(schema, parser);
  }
  return parser as (input: unknown) => ParseOutcome<z.output<S>>;
}

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
 * whether a retry can help. The client never retries: the worker owns retries.
 */
export class ApiClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #bearerToken: string | undefined;
  readonly #timeoutMs: number;
  readonly #onCall: ((call: ApiCallRecord) => void) | undefined;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #beforeCall: ((operation: string, signal: AbortSignal) => Promise<void>) | undefined;

  constructor(options: ApiClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#bearerToken = options.bearerToken;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#onCall = options.onCall;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#beforeCall = options.beforeCall;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        keepAliveTimeout: 30_000,
        connect: { timeout: Math.min(this.#timeoutMs, 10_000) },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
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
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /** 1. Restore a backup into a workspace. */
  restoreBackup(workgroupId: string, workspaceId: string, backupId: string, options?: CallOptions) {
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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
    return this.#call(
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

  async #call<S extends z.ZodType>(
    spec: CallSpec<S>,
    options: CallOptions = {},
  ): Promise<ApiResponse<z.output<S>>> {
    const started = performance.now();
    let status: number | undefined;
    let requestId: string | undefined;
    try {
      const { response, http } = await this.#send(spec, options);
      status = http.status;
      requestId = response.requestId;
      const result = this.#parseResult(spec, response, http);
      this.#notify(this.#record(spec, status, requestId, started));
      return { result, requestId: response.requestId, message: response.message };
    } catch (error) {
      const apiError =
        error instanceof ApiError
          ? error
          : this.#error(spec, { status, type: 'Unknown', reason: String(error) });
      this.#notify({ ...this.#record(spec, apiError.status, apiError.requestId, started), error: apiError });
      throw apiError;
    }
  }

  /** An observer's failure must not turn a good API call into a failed one. */
  #notify(record: ApiCallRecord): void {
    try {
      this.#onCall?.(record);
    } catch {
      // observers (logging, metrics) are best-effort by design
    }
  }

  #record(
    spec: CallSpec<z.ZodType>,
    status: number | undefined,
    requestId: string | undefined,
    started: number,
  ) {
    return {
      operation: spec.operation,
      method: spec.method,
      path: spec.path,
      status,
      requestId,
      durationMs: performance.now() - started,
    };
  }

  async #send(spec: CallSpec<z.ZodType>, options: CallOptions) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (spec.auth === 'bearer') {
      if (!this.#bearerToken) {
        throw this.#error(spec, {
          type: 'Unauthorized',
          reason:
            "no bearer token configured: this operation does not accept the API key; set NIGHTSHIFT_BEARER_TOKEN (bearerToken in the client's options)",
        });
      }
      headers.authorization = `Bearer ${this.#bearerToken}`;
    } else {
      headers['x-api-key'] = this.#apiKey;
    }
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }

    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      await this.#beforeCall?.(spec.operation, signal);
      const res = await request(this.#baseUrl + spec.path, {
        method: spec.method,
        headers,
        body,
        signal,
        dispatcher: this.#dispatcher,
      });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      text = await res.body.text();
    } catch (error) {
      if (options.signal?.aborted) {
        throw this.#error(spec, { type: 'Aborted', reason: 'the call was cancelled', cause: error });
      }
      if (timeout.aborted || isUndiciTimeout(error)) {
        throw this.#error(spec, {
          type: 'Timeout',
          reason: `no complete answer within ${timeoutMs} ms`,
          cause: error,
        });
      }
      throw this.#error(spec, { type: 'Network', reason: describeNetworkError(error), cause: error });
    }
    const http = { status, retryAfterMs: parseRetryAfter(retryAfter) };
    return { response: this.#parseBody(spec, text, http), http };
  }

  /** Reads the envelope (or the bare body) and turns every failure it reports into an ApiError. */
  #parseBody(
    spec: CallSpec<z.ZodType>,
    text: string,
    http: { status: number; retryAfterMs: number | undefined },
  ) {
    let json: unknown;
    try {
      json = text.length === 0 ? undefined : JSON.parse(text);
    } catch {
      throw this.#error(spec, {
        status: http.status,
        type: http.status >= 400 ? typeForStatus(http.status) : 'Unknown',
        reason: `the body is not JSON: "${this.#snippet(text)}"`,
        retryAfterMs: http.retryAfterMs,
      });
    }
    const isEnvelope = !spec.bare || (isObject(json) && ('RequestID' in json || 'Error' in json));
    if (!isEnvelope) {
      if (http.status >= 400) {
        throw this.#error(spec, {
          status: http.status,
          type: typeForStatus(http.status),
          reason: `HTTP ${http.status}: "${this.#snippet(text)}"`,
          retryAfterMs: http.retryAfterMs,
        });
      }
      return { payload: json, requestId: undefined, message: undefined };
    }

    const envelope = EnvelopeSchema.safeParse(json);
    if (!envelope.success) {
      throw this.#error(spec, {
        status: http.status,
        type: http.status >= 400 ? typeForStatus(http.status) : 'Unknown',
        reason: `the body is not the API's envelope: "${this.#snippet(text)}"`,
        retryAfterMs: http.retryAfterMs,
      });
    }
    const { Error: failed, ErrorDetails, Message, RequestID, Result } = envelope.data;
    // the request ID and the details travel on into logs and run summaries: scrubbed like the reason
    const requestId = typeof RequestID === 'string' ? this.#scrub(RequestID) : undefined;
    const message = Message ?? undefined;
    if (failed === true || http.status >= 400) {
      // only the spec's three fields travel on, each scrubbed: fields of the server's own go no further
      const details = (ErrorDetails ?? []).map((detail) => {
        const kept: ErrorDetail = {};
        for (const field of ['FieldName', 'Reason', 'Type'] as const) {
          const value = detail[field];
          if (value !== undefined) kept[field] = typeof value === 'string' ? this.#scrub(value) : value;
        }
        return kept;
      });
      throw this.#error(spec, {
        status: http.status,
        type: details[0]?.Type ?? typeForStatus(http.status),
        requestId,
        details,
        reason: this.#scrub(describeFailure(message, details, http.status)),
        retryAfterMs: http.retryAfterMs,
      });
    }
    return { payload: Result, requestId, message };
  }

  #parseResult<S extends z.ZodType>(
    spec: CallSpec<S>,
    response: { payload: unknown; requestId: string | undefined },
    http: { status: number },
  ): z.output<S> {
    let payload = response.payload;
    if (spec.bare && !Array.isArray(payload)) payload = [payload];
    if (spec.list) payload ??= [];
    const parsed = parserFor(spec.result)(payload);
    if (parsed.success) return parsed.data;
    throw this.#error(spec, {
      status: http.status,
      type: 'Unknown',
      requestId: response.requestId,
      reason: `unexpected response shape at ${parsed.where}: ${parsed.message}`,
    });
  }

  #error(
    spec: CallSpec<z.ZodType>,
    fields: {
      status?: number | undefined;
      type: ApiErrorKind;
      reason: string;
      requestId?: string | undefined;
      details?: ErrorDetail[];
      retryAfterMs?: number | undefined;
      cause?: unknown;
    },
  ): ApiError {
    return new ApiError({ operation: spec.operation, method: spec.method, path: spec.path, ...fields });
  }

  /** A short, single-line, secret-free excerpt of a body for an error message. */
  #snippet(text: string): string {
    const flat = text.replace(/\s+/g, ' ').trim();
    return this.#scrub(flat.length > SNIPPET_LENGTH ? `${flat.slice(0, SNIPPET_LENGTH)}…` : flat);
  }

  /** Servers sometimes echo what they were sent; a credential must never travel on in an error. */
  #scrub(text: string): string {
    let out = text;
    for (const secret of [this.#apiKey, this.#bearerToken]) {
      if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
    }
    return out;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeFailure(message: string | undefined, details: ErrorDetail[], status: number): string {
  const parts = details
    .map((d) => [d.FieldName, d.Reason].filter(Boolean).join(': '))
    .filter((part) => part.length > 0);
  const head = message || (status >= 400 ? `HTTP ${status}` : 'the API reported an error');
  return parts.length > 0 ? `${head} [${parts.join('; ')}]` : head;
}

function isUndiciTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  );
}

function describeNetworkError(error: unknown): string {
  const err = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = err?.cause?.code ?? err?.code;
  const message = err?.cause?.message ?? err?.message ?? String(error);
  return typeof code === 'string' ? `${code}: ${String(message)}` : String(message);
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  const trimmed = raw.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

import type { Clock } from '../../time/index.js';
import type { OperationName } from '../catalog.js';
import { type Json, notFound } from '../envelope.js';
import type { Lifecycle } from '../lifecycle.js';
import type { RenderCache } from '../render.js';
import type { SimCloudProvider, SimWorkgroup, SimWorkspace } from '../state.js';
import type { SimStore } from '../store.js';

/** What an operation may touch: handlers know nothing of HTTP, so they are plain functions. */
export interface SimContext {
  store: SimStore;
  cache: RenderCache;
  lifecycle: Lifecycle;
  clock: Clock;
}

export interface OperationCall {
  /** Path parameters under the spec's names (`workgroupID`, ...). */
  params: Readonly<Record<string, string | undefined>>;
  /** The parsed JSON body; undefined when there was none. */
  body: unknown;
  /** The caller's address. */
  ip: string;
}

/** `resultJson` goes into the envelope's `Result`; `bareJson` is the whole body (list org users). */
export type OperationResult = { message: string; resultJson: Json } | { bareJson: Json };

export type OperationHandler = (ctx: SimContext, call: OperationCall) => OperationResult;
export type OperationHandlers = Record<OperationName, OperationHandler>;

export function ok(message: string, result: unknown): OperationResult {
  return { message, resultJson: JSON.stringify(result) };
}

function param(call: OperationCall, name: string): string {
  return call.params[name] ?? '';
}

export function requireWorkgroup(ctx: SimContext, call: OperationCall): SimWorkgroup {
  const id = param(call, 'workgroupID');
  const wg = ctx.store.workgroups.get(id);
  if (!wg) throw notFound('workgroupID', `workgroup "${id}" does not exist`);
  return wg;
}

export function requireWorkspace(ctx: SimContext, call: OperationCall): SimWorkspace {
  const wg = requireWorkgroup(ctx, call);
  const id = param(call, 'workspaceID');
  const ws = ctx.store.workspaces.get(id);
  if (ws?.workgroup_id !== wg.workgroup_id) {
    throw notFound('workspaceID', `workspace "${id}" does not exist in workgroup "${wg.workgroup_id}"`);
  }
  return ws;
}

export function requireCloudProvider(ctx: SimContext, call: OperationCall): SimCloudProvider {
  const id = param(call, 'cloudProviderID');
  const cp = ctx.store.cloudProviders.get(id);
  if (!cp) throw notFound('cloudProviderID', `cloud provider "${id}" does not exist`);
  return cp;
}

export function databaseIdOf(call: OperationCall): string {
  return param(call, 'databaseID');
}

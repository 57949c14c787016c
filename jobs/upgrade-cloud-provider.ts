import { z } from 'zod';
import {
  type ApiError,
  CLUSTER_LOG_TYPES,
  type CloudProvider,
  type CloudProviderUpgrade,
  CloudProviderUpgradeSchema,
  type ComponentVersion,
  NODE_GROUP_NAMES,
  type NodeGroupName,
} from '../src/api/index.js';
import {
  type Action,
  type ActionContext,
  DurationSchema,
  idempotentStep,
  type StepContext,
  type StepResult,
  WaitTimeoutError,
} from '../src/engine/index.js';
import { NightshiftError } from '../src/errors/index.js';
import {
  CloudProviderIdsSchema,
  isErrorStatus,
  lastErrorOf,
  PROVIDER_STATUS,
  type ProviderFacts,
  type ProviderTarget,
  parseComponentVersions,
  providerFacts,
  providerLabel,
  providerRef,
  providerTargets,
  sameSet,
} from './support/cloud-providers.js';

const size = z.int().nonnegative();
const NodeGroupSizeSchema = z
  .strictObject({
    min_size: size.optional().meta({ description: 'Fewest nodes in the group.' }),
    max_size: size.optional().meta({ description: 'Most nodes in the group.' }),
    overprovisioning_factor: size.optional().meta({ description: 'Spare capacity kept above the workload.' }),
  })
  .refine((g) => Object.keys(g).length > 0, 'give min_size, max_size or overprovisioning_factor')
  .refine(
    (g) => g.min_size === undefined || g.max_size === undefined || g.min_size <= g.max_size,
    'min_size exceeds max_size',
  );

const ComponentsSchema = z
  .union([
    z.record(z.string().min(1), z.string().min(1)),
    z
      .array(z.strictObject({ name: z.string().min(1), version: z.string().min(1) }))
      .min(1)
      .refine((list) => new Set(list.map((c) => c.name)).size === list.length, 'a component is named twice'),
  ])
  .transform((components): ComponentVersion[] =>
    Array.isArray(components)
      ? components
      : Object.entries(components).map(([name, version]) => ({ name, version })),
  );

const params = z
  .strictObject({
    cloudProviderIds: CloudProviderIdsSchema,
    components: ComponentsSchema.optional().meta({
      description:
        'Component versions to deploy: { name: version }, or a list of { name, version }. Components not named stay as they are.',
    }),
    nodeGroups: z
      .strictObject(
        Object.fromEntries(
          NODE_GROUP_NAMES.map((name) => [
            name,
            NodeGroupSizeSchema.optional().meta({ description: `Sizes of node group ${name}.` }),
          ]),
        ) as Record<NodeGroupName, z.ZodOptional<typeof NodeGroupSizeSchema>>,
      )
      .optional()
      .meta({
        description:
          "Node group sizes, as in the API's node_group_config: { ng_16: { min_size, max_size, overprovisioning_factor } }. Groups and fields not named stay as they are.",
      }),
    logTypes: z
      .array(z.enum(CLUSTER_LOG_TYPES))
      .optional()
      .meta({
        description: `The cluster log types to enable, replacing the current list (${CLUSTER_LOG_TYPES.join(', ')}).`,
      }),
    waitReady: DurationSchema.optional().meta({
      description: 'How long to wait for each provider to be Active again after its upgrade.',
      default: '60m',
    }),
    pollInterval: DurationSchema.optional().meta({
      description: 'How often a provider being upgraded is read while waiting.',
      default: '30s',
    }),
  })
  .refine((p) => p.components !== undefined || p.nodeGroups !== undefined || p.logTypes !== undefined, {
    error: 'give components, nodeGroups or logTypes: there is nothing to upgrade',
    path: ['components'],
  });
type Params = z.output<typeof params>;

const DEFAULT_WAIT_MS = 60 * 60_000;
const DEFAULT_POLL_MS = 30_000;
const ALREADY = 'already at the requested versions';
const ALREADY_WHEN_REFUSED = `${ALREADY} (in place when the API refused the upgrade)`;

/** What of the request a provider does not have yet: the body to send, and the changes in words. */
interface Pending {
  upgrade: CloudProviderUpgrade;
  changes: string[];
}

/** Compares the request with the provider's record; only what differs is sent. */
function pendingUpgrade(cp: CloudProvider, p: Params): Pending {
  const upgrade: CloudProviderUpgrade = {};
  const changes: string[] = [];
  if (p.components) {
    const running = parseComponentVersions(cp.component_versions) ?? {};
    const components = p.components.filter(({ name, version }) => running[name] !== version);
    if (components.length > 0) upgrade.components = components;
    for (const { name, version } of components)
      changes.push(`${name} ${running[name] ?? '(none)'} → ${version}`);
  }
  if (p.nodeGroups) {
    const config: NonNullable<CloudProviderUpgrade['node_group_config']> = {};
    for (const name of NODE_GROUP_NAMES) {
      const wanted = p.nodeGroups[name];
      if (!wanted) continue;
      const current = cp.node_group_config?.[name];
      const fields = Object.entries(wanted).filter(
        ([field, value]) => current?.[field as keyof typeof wanted] !== value,
      );
      if (fields.length === 0) continue;
      config[name] = Object.fromEntries(fields);
      for (const [field, value] of fields) {
        changes.push(`${name}.${field} ${current?.[field as keyof typeof wanted] ?? '(none)'} → ${value}`);
      }
    }
    if (Object.keys(config).length > 0) upgrade.node_group_config = config;
  }
  if (p.logTypes) {
    const current = cp.cluster_enabled_log_types ?? [];
    if (!sameSet(current, p.logTypes)) {
      upgrade.cluster_enabled_log_types = p.logTypes;
      changes.push(`log types [${current.join(', ')}] → [${p.logTypes.join(', ')}]`);
    }
  }
  return { upgrade, changes };
}

/**
 * What a provider's step has done so far, kept in the run's checkpoint: it outlives a failed
 * attempt and a takeover, so a retry, or another worker, knows an upgrade was sent.
 */
const UpgradeRecordSchema = z.object({
  /** The provider as the step first read it. */
  before: z.custom<ProviderFacts>((value) => typeof value === 'object' && value !== null).optional(),
  /** Set once an upgrade call was sent: a retry must not send another while it is under way. */
  sentAt: z.number().optional(),
  requested: CloudProviderUpgradeSchema.optional(),
  /** An upgrade someone else started was under way when the step first read the provider. */
  foundUnderWay: z.boolean(),
});
type UpgradeRecord = z.output<typeof UpgradeRecordSchema>;

interface Wait {
  timeoutMs: number;
  intervalMs: number;
}

/**
 * Reads the provider every `intervalMs` until the upgrade is over: `Active` after having been
 * seen `Upgrading` (or `Active` with the request in place, for an API slow to show the change),
 * or a failure status. Failed reads follow the engine's rule for waits (`ctx.waitForState`).
 */
function waitUntilSettled(
  ctx: ActionContext,
  target: ProviderTarget,
  p: Params,
  wait: Wait,
  step: StepContext,
  seenUpgrading: boolean,
): Promise<CloudProvider> {
  let upgrading = seenUpgrading;
  const seconds = Math.round(wait.timeoutMs / 1000);
  return ctx.waitForState({
    signal: step.signal,
    intervalMs: wait.intervalMs,
    timeoutMs: wait.timeoutMs,
    look: async (signal) => (await ctx.api.getCloudProvider(target.id, { signal })).result,
    reached: (cp) => {
      upgrading ||= cp.status === PROVIDER_STATUS.upgrading;
      return (
        isErrorStatus(cp.status) ||
        (cp.status === PROVIDER_STATUS.active && (upgrading || pendingUpgrade(cp, p).changes.length === 0))
      );
    },
    timedOut: (last) => {
      const label = providerLabel(target, last);
      return new WaitTimeoutError(
        last?.status === PROVIDER_STATUS.active
          ? `cloud provider ${label} showed no upgrade within ${seconds}s: still Active, outstanding: ${pendingUpgrade(last, p).changes.join('; ')}`
          : `cloud provider ${label} not Active within ${seconds}s: still ${last?.status ?? 'unknown'} when the wait ran out`,
      );
    },
    onFailedLook: (error, delayMs) =>
      step.log.warn({ err: (error as ApiError).toJSON(), delayMs }, 'cloud provider poll failed; polling on'),
  });
}

/**
 * The provider as the upgrade left it: a failure unless it is Active, without `last_error`, with
 * everything requested in place.
 */
function verdict(target: ProviderTarget, cp: CloudProvider, p: Params): string | undefined {
  const label = providerLabel(target, cp);
  const lastError = lastErrorOf(cp);
  if (lastError) return `cloud provider ${label} ended the upgrade with last_error: ${lastError}`;
  if (cp.status !== PROVIDER_STATUS.active)
    return `cloud provider ${label} ended the upgrade ${cp.status ?? 'without a status'}`;
  const missing = pendingUpgrade(cp, p).changes;
  if (missing.length > 0) {
    return `cloud provider ${label} finished upgrading but not everything requested is in place: ${missing.join('; ')}`;
  }
  return undefined;
}

/** The upgrade ended but did not leave the provider as requested. */
export class UpgradeFailedError extends NightshiftError {
  override name = 'UpgradeFailedError';
  readonly code = 'NS_UPGRADE_FAILED';
}

/** What a run's providers share: the run's context, its parameters, its waits and the evidence gathered. */
interface Upgrading {
  ctx: ActionContext;
  p: Params;
  wait: Wait;
  /** Per provider: what was requested, before and after, and whether it passed. */
  evidence: Record<string, unknown>;
}

/** The provider's step once its upgrade is over: evidence recorded; failed unless it is as requested. */
function finishUpgrade(
  { ctx, p, evidence }: Upgrading,
  target: ProviderTarget,
  record: UpgradeRecord,
  cp: CloudProvider,
): StepResult {
  const failure = verdict(target, cp, p);
  const after = providerFacts(cp);
  const timeToReadyMs = record.sentAt === undefined ? undefined : ctx.now().getTime() - record.sentAt;
  evidence[target.id] = {
    name: providerLabel(target, cp),
    passed: failure === undefined,
    ...(failure ? { failure } : {}),
    requested: record.requested ?? null,
    before: record.before,
    after,
    timeToReadyMs: timeToReadyMs ?? null,
  };
  ctx.evidence({ upgrades: { ...evidence } });
  if (failure) throw new UpgradeFailedError(failure);
  if (record.sentAt === undefined) {
    return {
      outcome: 'skipped',
      reason: `${ALREADY} (after waiting for an upgrade already under way)`,
      detail: { before: record.before, after },
    };
  }
  return {
    outcome: 'succeeded',
    reason: record.foundUnderWay ? 'upgraded after an upgrade already under way ended' : undefined,
    detail: { requested: record.requested, before: record.before, after, timeToReadyMs },
  };
}

/**
 * One provider's upgrade: waits out an upgrade under way, sends only what differs (recorded
 * before the call, so a retry or a takeover never sends a second while one runs), then waits for
 * the provider to settle. Read on every attempt: a failed attempt's call may have been applied.
 */
async function upgradeProvider(
  upgrading: Upgrading,
  target: ProviderTarget,
  step: StepContext,
): Promise<StepResult> {
  const { ctx, p, wait } = upgrading;
  const record: UpgradeRecord = (await step.progressRecord.read(UpgradeRecordSchema)) ?? {
    foundUnderWay: false,
  };
  let cp = (await ctx.api.getCloudProvider(target.id, { signal: step.signal })).result;
  if (!record.before) {
    record.before = providerFacts(cp);
    await step.progressRecord.write(record);
  }
  for (let refused = false; ; refused = true) {
    if (cp.status === PROVIDER_STATUS.upgrading) {
      // Ours from an earlier attempt, or someone else's: never send another while one runs.
      if (record.sentAt === undefined && !record.foundUnderWay) {
        record.foundUnderWay = true;
        await step.progressRecord.write(record);
      }
      step.log.info({ cloudProviderId: target.id }, 'cloud provider already Upgrading; waiting');
      cp = await waitUntilSettled(ctx, target, p, wait, step, true);
      if (record.sentAt !== undefined || isErrorStatus(cp.status) || lastErrorOf(cp)) {
        return finishUpgrade(upgrading, target, record, cp);
      }
    }
    const pending = pendingUpgrade(cp, p);
    if (pending.changes.length === 0) {
      if (record.sentAt !== undefined || record.foundUnderWay)
        return finishUpgrade(upgrading, target, record, cp);
      return { outcome: 'skipped', reason: ALREADY, detail: { before: record.before } };
    }
    const sent = await sendUpgrade(upgrading, target, step, record, pending, refused);
    if (sent.outcome === 'under way') {
      cp = sent.cp;
      continue;
    }
    if (sent.outcome === 'in place') {
      return {
        outcome: 'skipped',
        reason: ALREADY_WHEN_REFUSED,
        detail: { before: record.before, after: providerFacts(sent.cp) },
      };
    }
    step.log.info({ cloudProviderId: target.id, changes: pending.changes }, 'cloud provider upgrade started');
    return finishUpgrade(
      upgrading,
      target,
      record,
      await waitUntilSettled(ctx, target, p, wait, step, false),
    );
  }
}

/**
 * Sends the upgrade, recorded first. Refused for good, the provider is read again: an upgrade that
 * started between our read and our call is `under way` (waited for, then looked at again; once: a
 * second refusal is the API's answer); what we asked for already there is `in place`.
 */
async function sendUpgrade(
  { ctx, p }: Upgrading,
  target: ProviderTarget,
  step: StepContext,
  record: UpgradeRecord,
  pending: Pending,
  refused: boolean,
): Promise<{ outcome: 'sent' } | { outcome: 'under way' | 'in place'; cp: CloudProvider }> {
  const sentBefore = record.sentAt;
  record.sentAt ??= ctx.now().getTime();
  record.requested = pending.upgrade;
  // stored before the call: a worker that dies after sending leaves the next one knowing
  await step.progressRecord.write(record);
  const sent = await idempotentStep({
    attempt: () => ctx.api.upgradeCloudProvider(target.id, pending.upgrade, { signal: step.signal }),
    isDone: async (refusal) => {
      record.sentAt = sentBefore;
      await step.progressRecord.write(record);
      const cp = (await ctx.api.getCloudProvider(target.id, { signal: step.signal })).result;
      if (!refused && cp.status === PROVIDER_STATUS.upgrading) return { outcome: 'under way' as const, cp };
      // someone else's upgrade, or ours applied although the answer says otherwise
      const inPlace =
        cp.status === PROVIDER_STATUS.active &&
        !lastErrorOf(cp) &&
        pendingUpgrade(cp, p).changes.length === 0;
      if (!inPlace) return undefined;
      step.log.info(
        { cloudProviderId: target.id, err: refusal.toJSON() },
        'upgrade refused; already in place',
      );
      return { outcome: 'in place' as const, cp };
    },
  });
  return sent.already ? sent.found : { outcome: 'sent' };
}

/** Upgrades BYOC cloud providers' components, node groups and log types, then waits for each. */
export const upgradeCloudProvider: Action<typeof params> = {
  name: 'upgrade-cloud-provider',
  description:
    'Upgrade cloud providers (components, node group sizes, log types) and wait until each is Active again.',
  destructive: true,
  stopAfter: { failures: 1 },
  scope: 'workgroup',
  targetOptional: true,
  params,
  longestWait: (p) => ({
    ms: p.waitReady ?? DEFAULT_WAIT_MS,
    why: p.waitReady === undefined ? 'waitReady, 60m by default' : 'waitReady',
  }),
  example: `version: 1
jobs:
  byoc-upgrade:
    description: Roll the quarterly component release out to the staging providers
    schedule: "0 3 * * 6"
    timezone: Europe/Berlin
    action: upgrade-cloud-provider
    target: { workgroups: ["staging-*"] }
    confirm: true
    concurrency: 1
    timeout: 3h
    with:
      components: { engine: "4.2.0", gateway: "1.10.0" }
      nodeGroups:
        ng_16: { min_size: 1, max_size: 6 }
      logTypes: [api, audit]
      waitReady: 90m
      pollInterval: 1m
`,

  async plan(ctx, p: Params) {
    const targets = providerTargets(ctx, p.cloudProviderIds);
    await ctx.forEachTarget(targets, providerRef, async (target, step) => {
      const { result: cp } = await ctx.api.getCloudProvider(target.id, { signal: step.signal });
      const { changes } = pendingUpgrade(cp, p);
      const detail = { before: providerFacts(cp) };
      if (cp.status === PROVIDER_STATUS.upgrading) {
        return {
          outcome: 'planned',
          reason: `Upgrading now: would wait for it, then upgrade what is still not in place${changes.length > 0 ? ` (as of now: ${changes.join('; ')})` : ''}`,
          detail,
        };
      }
      if (changes.length === 0) return { outcome: 'skipped', reason: ALREADY, detail };
      return { outcome: 'planned', reason: `would upgrade: ${changes.join('; ')}`, detail };
    });
  },

  async run(ctx, p: Params) {
    const upgrading: Upgrading = {
      ctx,
      p,
      wait: { timeoutMs: p.waitReady ?? DEFAULT_WAIT_MS, intervalMs: p.pollInterval ?? DEFAULT_POLL_MS },
      evidence: {},
    };
    await ctx.forEachTarget(providerTargets(ctx, p.cloudProviderIds), providerRef, (target, step) =>
      upgradeProvider(upgrading, target, step),
    );
  },
};

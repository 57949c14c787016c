import { z } from 'zod';
import type { CloudProvider, CloudProviderUpdate } from '../src/api/index.js';
import {
  type Action,
  idempotentStep,
  type PlanContext,
  type StepContext,
  type StepResult,
} from '../src/engine/index.js';
import {
  type ProviderReference,
  providerRef,
  resolveProviderReference,
  unknownProvider,
} from './support/cloud-providers.js';

const params = z
  .strictObject({
    cloudProvider: z.string().min(1).meta({
      description:
        'The provider to update: its id, or its name as the workgroups bound to it show it (a provider no workgroup uses: its id).',
    }),
    name: z.string().min(1).optional().meta({ description: 'The name to give it.' }),
    version: z.string().min(1).optional().meta({
      description:
        'The deployment version to record against it (changes nothing deployed: see upgrade-cloud-provider).',
    }),
  })
  .refine((p) => p.name !== undefined || p.version !== undefined, {
    error: 'give a name, a version or both: there is nothing to update',
    path: ['name'],
  });
type Params = z.output<typeof params>;

/** The part of the requested update the provider does not have yet. */
function pendingUpdate(cp: CloudProvider, { name, version }: Params): CloudProviderUpdate {
  return {
    ...(name !== undefined && cp.name !== name ? { name } : {}),
    ...(version !== undefined && cp.version !== version ? { version } : {}),
  };
}

function isEmpty(update: CloudProviderUpdate): boolean {
  return Object.keys(update).length === 0;
}

function describeUpdate(cp: CloudProvider, update: CloudProviderUpdate, done: boolean): string {
  return [
    update.name !== undefined &&
      `${done ? 'renamed' : 'would rename'} "${cp.name ?? cp.id}" to "${update.name}"`,
    update.version !== undefined &&
      `${done ? 'recorded' : 'would record'} version ${update.version} (${done ? 'was' : 'now'} ${cp.version ?? 'none'})`,
  ]
    .filter(Boolean)
    .join(' and ');
}

function already({ name, version }: Params): StepResult {
  const parts = [name !== undefined && `named "${name}"`, version !== undefined && `at version ${version}`];
  return { outcome: 'skipped', reason: `already ${parts.filter(Boolean).join(' and ')}` };
}

function summary(cp: CloudProvider) {
  return { name: cp.name ?? null, version: cp.version ?? null };
}

/** Reads the provider `ref` leads to, turning a 404 on an id the listing did not know into "not found". */
async function readProvider(
  ctx: PlanContext,
  ref: ProviderReference,
  written: string,
  signal: AbortSignal,
): Promise<CloudProvider> {
  try {
    return (await ctx.api.getCloudProvider(ref.id, { signal })).result;
  } catch (error) {
    throw unknownProvider(ref, written, error);
  }
}

/**
 * Runs `step` as the one target of the job: the provider `p.cloudProvider` leads to, read on
 * every attempt (the update of a failed attempt may have been made after all) and skipped when
 * it has everything asked already.
 */
async function forPendingUpdate(
  ctx: PlanContext,
  p: Params,
  step: (
    cp: CloudProvider,
    update: CloudProviderUpdate,
    ref: ProviderReference,
    context: StepContext,
  ) => Promise<StepResult>,
): Promise<void> {
  const ref = resolveProviderReference(ctx.fleet.workgroups, p.cloudProvider, p.name);
  await ctx.forEachTarget([ref], providerRef, async (_, context) => {
    const cp = await readProvider(ctx, ref, p.cloudProvider, context.signal);
    const update = pendingUpdate(cp, p);
    if (isEmpty(update)) return already(p);
    return step(cp, update, ref, context);
  });
}

/** Renames a cloud provider or records a version against it (operation 5); what is deployed stays. */
export const updateCloudProvider: Action<typeof params> = {
  name: 'update-cloud-provider',
  description:
    'Rename a cloud provider and/or record a deployment version against it; one already so is skipped.',
  destructive: false,
  stopAfter: { failures: 1 },
  scope: 'none',
  params,
  example: `version: 1
jobs:
  record-byoc-release:
    description: Record the release deployed to prod-core's provider by the platform team
    schedule: "0 6 * * 1"
    action: update-cloud-provider
    with:
      cloudProvider: prod-core-byoc
      name: prod-core-byoc-eu
      version: "1.5.0"
`,

  async plan(ctx, p: Params) {
    await forPendingUpdate(ctx, p, async (cp, update) => ({
      outcome: 'planned',
      reason: describeUpdate(cp, update, false),
      detail: { before: summary(cp) },
    }));
  },

  async run(ctx, p: Params) {
    await forPendingUpdate(ctx, p, async (cp, update, ref, step) => {
      // A refusal of an update someone else made meanwhile is not a failure.
      const outcome = await idempotentStep({
        attempt: () => ctx.api.updateCloudProvider(ref.id, update, { signal: step.signal }),
        isDone: async () => {
          const after = await readProvider(ctx, ref, p.cloudProvider, step.signal).catch(() => undefined);
          return after !== undefined && isEmpty(pendingUpdate(after, p));
        },
      });
      if (outcome.already) return already(p);
      return {
        outcome: 'succeeded',
        reason: describeUpdate(cp, update, true),
        detail: { before: summary(cp), after: summary(outcome.result.result) },
      };
    });
  },
};

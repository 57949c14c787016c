import { hideSecrets, type PolicyJob, type RunParameters } from '../policy/index.js';
import type { PolicySignatures, PolicyStore } from '../store/index.js';
import { type AuditLog, type Origin, recordChange } from './origin.js';

/** A run a person asked for, as the queue carries it to a worker. */
export interface ManualRun {
  readonly runId: string;
  readonly job: string;
  readonly policySha: string;
  readonly trigger: 'manual';
  readonly dryRun: boolean;
  /** As typed (a secret as its `${NAME}`); absent when none was given. */
  readonly parameters?: RunParameters;
  /** The parameters' signatures, bound to this run, its job and its policy. */
  readonly parameterSignatures?: PolicySignatures;
}

export interface RunNowPorts {
  /** Must hold a policy key: the text and the parameters are signed with it. */
  readonly policies: Pick<PolicyStore, 'put' | 'signParameters'>;
  /** A new run id for a manual run of `job`. */
  readonly runId: (job: string) => string;
  /** Puts the run in the queue the workers take runs from. */
  readonly enqueue: (run: ManualRun) => Promise<void>;
  readonly audit: AuditLog;
}

export interface RunNowRequest {
  /** The policy text the run executes, as checked with the parameters (its `${VAR}`s unresolved). */
  readonly policyText: string;
  /** The job, as that text read with the parameters gives it: its name, and the secrets to hide. */
  readonly job: Pick<PolicyJob, 'name' | 'secrets'>;
  readonly dryRun: boolean;
  readonly parameters: RunParameters;
  readonly reason?: string | undefined;
}

/**
 * Stores the policy's text (signed), records who asked for the run in the audit trail, then queues
 * it: the request is on record before any worker can act on it. The parameters travel as typed (a
 * secret as its `${NAME}`), signed for this run with the policy's key, and each worker checks the
 * signatures and reads them again with the signed policy. The audit entry shows each parameter as
 * `with.<key>`, a secret's value as its reference. Returns the run's id.
 */
export async function queueManualRun(
  ports: RunNowPorts,
  { policyText, job, dryRun, parameters, reason }: RunNowRequest,
  origin: Origin,
): Promise<string> {
  const policySha = await ports.policies.put(policyText);
  const runId = ports.runId(job.name);
  const shown = hideSecrets(job.secrets)(parameters);
  await recordChange(ports.audit, origin, 'run', runId, {
    why: reason?.trim(),
    details: {
      job: job.name,
      ...(dryRun ? { dryRun } : {}),
      ...Object.fromEntries(Object.entries(shown).map(([key, value]) => [`with.${key}`, value])),
    },
  });
  const signed =
    Object.keys(parameters).length > 0
      ? {
          parameters,
          parameterSignatures: ports.policies.signParameters({ runId, job: job.name, policySha, parameters }),
        }
      : {};
  await ports.enqueue({ runId, job: job.name, policySha, trigger: 'manual', dryRun, ...signed });
  return runId;
}

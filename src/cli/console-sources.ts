import { actionRegistry } from '../../jobs/index.js';
import type { ConsoleSources } from '../ops/index.js';
import { checkPolicy, formatProblem, type PolicyVariables } from '../policy/index.js';
import { FindingsLedger, RedisFleetListings, WorkspaceHistory } from '../store/index.js';
import type { RedisRuntime } from './runtime.js';

/**
 * What the console reads, on a role's Redis runtime. The policy in force is read with this
 * process's variables; one it lacks is no error (`unsetVariables: 'warning'`): the console shows
 * names and schedules, never a value.
 */
export function consoleSources(runtime: RedisRuntime, variables: PolicyVariables): ConsoleSources {
  const prefix = runtime.prefix;
  return {
    history: runtime.history,
    policies: runtime.policies,
    suspensions: runtime.suspensions,
    state: runtime.state,
    listings: new RedisFleetListings(runtime.redis, { prefix }),
    findings: new FindingsLedger(runtime.redis, { prefix }),
    timeline: new WorkspaceHistory(runtime.redis, { prefix }),
    readPolicy(text, sha) {
      const { policy, problems } = checkPolicy(text, `policy@${sha.slice(0, 12)}`, {
        registry: actionRegistry,
        ...variables,
        unsetVariables: 'warning',
      });
      if (policy) return policy;
      const first = problems[0];
      return `the policy in force cannot be read here${first ? `: ${formatProblem(first)}` : ''}`;
    },
  };
}

import type { ApiClient } from '../api/index.js';
import { callScope } from './call-scope.js';

/**
 * The client as a run's action uses it: a call made for a pipelined target (its call scope has
 * `calls`) waits for one of the run's call slots and holds it until the call has ended, so the
 * run never has more than its `concurrency` calls in flight however many targets it works at
 * once. Every other call goes straight through: a step that is not pipelined holds its slot for
 * the whole target already.
 */
export function gatedApi(api: ApiClient): ApiClient {
  return new Proxy(api, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || property === 'close') return value;
      const operation = value as (...params: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => {
        const gate = callScope.getStore()?.calls;
        if (!gate) return operation.apply(target, args);
        return gate.slots.take(gate.rank).then((release) => {
          try {
            return operation.apply(target, args).finally(release);
          } catch (error) {
            release();
            throw error;
          }
        });
      };
    },
  });
}

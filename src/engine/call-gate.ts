import type { ApiClient } from '../api/index.js';
import { callScope, type TargetCalls } from './call-scope.js';

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
        const calls = callScope.getStore()?.calls;
        if (!calls) return operation.apply(target, args);
        return takeSlot(calls).then((release) => {
          try {
            return operation.apply(target, args).then(
              (answer) => {
                release();
                return answer;
              },
              (error: unknown) => {
                keepForRetry(calls, release, error);
                throw error;
              },
            );
          } catch (error) {
            release();
            throw error;
          }
        });
      };
    },
  });
}

/** The slot the target kept from a failed call, or the next free one. */
function takeSlot(calls: TargetCalls): Promise<() => void> {
  const { held } = calls;
  calls.held = undefined;
  return held ? Promise.resolve(held) : calls.slots.take(calls.rank);
}

/** A failure a retry may mend keeps the slot for the target's next try (`TargetCalls.held`). */
function keepForRetry(calls: TargetCalls, release: () => void, error: unknown): void {
  const retryable = (error as { retryable?: unknown } | undefined)?.retryable === true;
  if (retryable && !calls.held) calls.held = release;
  else release();
}

/** Gives back the slot a target kept for a retry it will not make: it has ended. */
export function releaseKept(calls: TargetCalls): void {
  const { held } = calls;
  calls.held = undefined;
  held?.();
}

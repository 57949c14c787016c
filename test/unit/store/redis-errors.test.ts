import { describe, expect, it } from 'vitest';
import { isRedisUnreachable, redisRefusal } from '../../../src/store/index.js';

/** An error as ioredis builds it: a name, a message, and whatever it hangs on it. */
function ioredisError(name: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name, ...extra });
}

const wrongPassword = ioredisError(
  'ReplyError',
  'WRONGPASS invalid username-password pair or user is disabled.',
  {
    command: { name: 'auth', args: ['s3cret'] },
  },
);

describe('redisRefusal', () => {
  it('answers what Redis replied, never the command that carried the password', () => {
    expect(redisRefusal(wrongPassword)).toBe('WRONGPASS invalid username-password pair or user is disabled.');
  });

  it('finds a cluster node’s refusal under the cluster’s error', () => {
    const cluster = ioredisError('ClusterAllFailedError', 'Failed to refresh slots cache.', {
      lastNodeError: wrongPassword,
    });
    expect(redisRefusal(cluster)).toMatch(/^WRONGPASS/);
  });

  it('answers undefined for an error Redis did not reply', () => {
    expect(redisRefusal(ioredisError('Error', 'connect ECONNREFUSED 127.0.0.1:6379'))).toBeUndefined();
    expect(redisRefusal(undefined)).toBeUndefined();
  });
});

describe('isRedisUnreachable', () => {
  it.each([
    [
      'one Redis',
      ioredisError('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 3).'),
    ],
    ['a cluster', ioredisError('ClusterAllFailedError', 'Failed to refresh slots cache.')],
    ['a cluster that gave up', ioredisError('Error', 'None of startup nodes is available')],
    [
      'Sentinels',
      ioredisError('Error', 'All sentinels are unreachable and retry is disabled. Last error: x'),
    ],
  ])('recognises %s that never answered', (_, error) => {
    expect(isRedisUnreachable(error)).toBe(true);
  });

  it('leaves any other failure to be reported as it is', () => {
    expect(isRedisUnreachable(wrongPassword)).toBe(false);
    expect(isRedisUnreachable(new TypeError('x is not a function'))).toBe(false);
  });
});

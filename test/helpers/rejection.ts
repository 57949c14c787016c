import { expect } from 'vitest';

/** What `promise` rejects with, checked to be an instance of `type`; a resolution fails the test. */
export async function rejectionOf<E extends Error>(
  promise: Promise<unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: any constructor of E, whatever its parameters
  type: new (...args: any[]) => E,
): Promise<E> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}

import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import { idempotentStep } from '../../../src/engine/index.js';

const apiError = (status: number, type: string) =>
  new ApiError({ operation: 'pauseWorkspace', method: 'POST', path: '/p', status, type, reason: 'refused' });
const refusal = () => apiError(400, 'Bad-Request');
const rejecting = (error: unknown) => () => Promise.reject(error);

describe('idempotentStep', () => {
  it('returns the call’s result, without re-reading, when the call succeeds', async () => {
    const isDone = vi.fn(async () => 'Stopped');
    await expect(idempotentStep({ attempt: async () => 'sent', isDone })).resolves.toEqual({
      already: false,
      result: 'sent',
    });
    expect(isDone).not.toHaveBeenCalled();
  });

  it('counts a refusal as done when the re-read shows the change already there', async () => {
    const error = refusal();
    const isDone = vi.fn(async () => 'Stopping');
    await expect(idempotentStep({ attempt: rejecting(error), isDone })).resolves.toEqual({
      already: true,
      found: 'Stopping',
    });
    expect(isDone).toHaveBeenCalledWith(error);
  });

  it.each([false, undefined])('throws the refusal when the re-read answers %s', async (answer) => {
    const error = refusal();
    await expect(idempotentStep({ attempt: rejecting(error), isDone: async () => answer })).rejects.toBe(
      error,
    );
  });

  it('throws what notDone makes of the refusal when the change is not there', async () => {
    const reworded = new Error('reworded');
    await expect(
      idempotentStep({ attempt: rejecting(refusal()), isDone: async () => false, notDone: () => reworded }),
    ).rejects.toBe(reworded);
  });

  it.each([
    ['a transient API error', apiError(503, 'Service-Unavailable')],
    ['a throttle', apiError(429, 'Quota-Exceed')],
    ['an error that is no API answer', new Error('socket hang up')],
  ])('throws %s as it is, without re-reading, for the engine to retry', async (_, error) => {
    const isDone = vi.fn(async () => true);
    await expect(idempotentStep({ attempt: rejecting(error), isDone })).rejects.toBe(error);
    expect(isDone).not.toHaveBeenCalled();
  });

  it('throws what the re-read throws (a throttle on it, say), not the refusal', async () => {
    const throttle = apiError(429, 'Quota-Exceed');
    await expect(idempotentStep({ attempt: rejecting(refusal()), isDone: rejecting(throttle) })).rejects.toBe(
      throttle,
    );
  });
});

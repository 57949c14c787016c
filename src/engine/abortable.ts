/**
 * Settles as `promise` does, or rejects with the signal's reason when it aborts first (`onAbort`
 * told before): what `promise` stands for goes on, only the wait for it ends. A Redis call during
 * an outage may wait in ioredis's offline queue as long as the outage lasts; a listing shared by
 * several runs is still wanted by the others.
 */
export function abortable<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort?: (reason: unknown) => void,
): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort?.(signal.reason);
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

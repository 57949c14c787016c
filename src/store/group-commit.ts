/**
 * Writes that many callers make at once go to Redis together: the first write of a burst leaves
 * once the event loop has handled every callback ready now (the answers that arrived together),
 * and whatever arrives while it is under way goes in the next one, one round trip for all of them. No caller's promise settles before its
 * own item was written (or failed with the batch's error), so a write that must be durable
 * before what follows it still is.
 */
export class GroupCommit<In, Out> {
  readonly #write: (items: readonly In[]) => Promise<readonly Out[]>;
  readonly #maxBatch: number;
  #queue: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  #draining = false;

  constructor(write: (items: readonly In[]) => Promise<readonly Out[]>, { maxBatch = 1_000 } = {}) {
    this.#write = write;
    this.#maxBatch = maxBatch;
  }

  submit(item: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#draining) return;
      this.#draining = true;
      setImmediate(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      try {
        const outs = await this.#write(batch.map(({ item }) => item));
        for (const [index, { resolve }] of batch.entries()) resolve(outs[index] as Out);
      } catch (error) {
        for (const { reject } of batch) reject(error);
      }
    }
    this.#draining = false;
  }
}

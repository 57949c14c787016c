import type { Prng } from './random.js';

/** Ids that look like the real thing (`wg-3f9a1c`) and never repeat within one state. */
export class IdMaker {
  readonly #used = new Set<string>();
  constructor(readonly rand: Prng) {}

  next(prefix: string, length = 6): string {
    for (;;) {
      const candidate = `${prefix}-${this.rand.hex(length)}`;
      if (!this.#used.has(candidate)) {
        this.#used.add(candidate);
        return candidate;
      }
    }
  }
}

/** An ISO time `days` before the seed's fixed instant. */
export type Ago = (days: number) => string;

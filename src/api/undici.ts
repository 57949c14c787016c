import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);
let loaded: typeof Undici | undefined;

/**
 * The `undici` package, loaded on its first use: by the first client or webhook made, not by
 * every process that imports this folder. A scheduler that sends no webhook never loads it
 * (5 MB of heap, and the parts of Node it starts).
 */
export function undici(): typeof Undici {
  loaded ??= require('undici') as typeof Undici;
  return loaded;
}

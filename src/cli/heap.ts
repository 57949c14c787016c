import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'regular' | 'last-resort' }) => void;

let collect: Collect | undefined;

/**
 * Collects the garbage a service's start or a policy load left (modules set up, the policy's
 * parse: a 10,000-job policy leaves about 250 MB) and gives the pages back to the system. V8 does
 * it on its own only once the process has been idle for a while: about 100 s after a scheduler
 * loaded 10,000 jobs (measured on Node 24), holding the start's peak (490 MB) until then.
 *
 * `thorough` is V8's last-resort collection: full collections in a row until nothing more is
 * freed, which also drops the bytecode of what ran once (the start's own code; about 3 MB). It
 * takes 0.2 to 1 s, so it is for a service that has not started its work yet; one full collection
 * (a tenth of that) after a reload.
 *
 * The collector is reached as test runners reach it, without `--expose-gc` on the command line:
 * a context created after the flag is set has `gc`.
 */
export function collectGarbage({ thorough }: { thorough: boolean }): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  collect({ type: 'major', execution: 'sync', flavor: thorough ? 'last-resort' : 'regular' });
}

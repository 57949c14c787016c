/**
 * Lets waiting callers go on at most `perTurn` a turn of the event loop. A burst of runs admitted
 * together (a thousand jobs on one tick) would otherwise build all their contexts in one turn,
 * hundreds of milliseconds of CPU on a cold worker during which no I/O is served: not the burst's
 * own listing request (its connection waits to be established), nor a Redis reply. In turns, the
 * event loop serves I/O between every `perTurn` runs.
 */
export function turns(perTurn: number): () => Promise<void> {
  const waiting: (() => void)[] = [];
  let scheduled = false;
  const next = () => {
    scheduled = false;
    for (const go of waiting.splice(0, perTurn)) go();
    // an immediate set from an immediate runs a turn later, after the loop has polled for I/O
    schedule();
  };
  const schedule = () => {
    if (scheduled || waiting.length === 0) return;
    scheduled = true;
    setImmediate(next);
  };
  return () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      schedule();
    });
}

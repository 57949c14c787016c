import type { ChildProcess } from 'node:child_process';

/** CLI and Redis processes started and not yet exited, and whether each leads a process group of its own. */
export const running = new Map<ChildProcess, boolean>();

/**
 * Kills (SIGKILL) every CLI process this test file started that is still running, with its group
 * when it leads one: a test that failed or timed out before stopping one must not leave it behind.
 * test/setup.ts runs it after each file; startCli (engine.ts) and the Redis topologies
 * (redis-topologies.ts, for the Redis processes bench/harness/redis-topologies.ts starts) fill the map.
 */
export function killLeftoverClis(): void {
  for (const [child, group] of running) {
    try {
      if (group) process.kill(-(child.pid as number), 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }
  running.clear();
}

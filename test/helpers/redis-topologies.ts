import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import {
  type ClusterOptions,
  type SentinelOptions,
  startRedisCluster as startCluster,
  startRedisSentinels as startSentinels,
  type TestCluster,
  type TestSentinels,
  type TestTopology,
} from '../../bench/harness/redis-topologies.js';
import { running } from './processes.js';

// the topologies live in bench/harness (the edge drill starts Sentinels too, and bench/ imports
// nothing from test/); a test's are tracked so that test/setup.ts kills what a failed file left
export {
  DOWN_AFTER_MS,
  type RedisConnector,
  SENTINEL_NAME,
  type TestCluster,
  type TestSentinels,
  type TestTopology,
} from '../../bench/harness/redis-topologies.js';

/** test/setup.ts kills what a failed file left running, each process with its group. */
function tracked(child: ChildProcess): void {
  running.set(child, true);
  child.once('exit', () => running.delete(child));
}

/** Three masters, no replicas (bench/harness/redis-topologies.ts), killed after a failed file. */
export function startRedisCluster(options: Omit<ClusterOptions, 'onSpawn'> = {}): Promise<TestCluster> {
  return startCluster({ ...options, onSpawn: tracked });
}

/** A primary, its replica and three Sentinels (bench/harness/redis-topologies.ts), killed after a failed file. */
export function startRedisSentinels(options: Omit<SentinelOptions, 'onSpawn'> = {}): Promise<TestSentinels> {
  return startSentinels({ ...options, onSpawn: tracked });
}

/** A topology for the test file: started before its first test, stopped after its last. */
export function useTopology<T extends TestTopology>(start: () => Promise<T>): { readonly current: T } {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  }, 60_000);
  afterAll(async () => {
    await started?.stop();
  });
  return {
    get current() {
      if (!started) throw new Error('the topology has not started');
      return started;
    },
  };
}

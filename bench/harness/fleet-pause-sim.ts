import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { parseFleet, seedState, startSimulator } from '../../src/sim/index.js';

export const API_KEY = 'bench-key';
/** Workgroups are named `partNN-<seeded name>` with NN = index mod PARTS, so K shards (K dividing PARTS) are K sets of globs. */
export const PARTS = 24;

export interface FleetSize {
  workgroups: number;
  perWorkgroup: number;
}

export const fleetSize = (fleet: FleetSize) => fleet.workgroups * fleet.perWorkgroup;

export type SimRequest = { op: 'fleet'; fleet: FleetSize } | { op: 'reset' } | { op: 'paused' };
export interface SimReply {
  url?: string;
  workspaces?: number;
  paused?: number;
}

const part = (index: number) => `part${String(index % PARTS).padStart(2, '0')}`;

/** The seeded fleet with every workspace Active and workgroups named by part. */
function allActiveState({ workgroups, perWorkgroup }: FleetSize) {
  const state = seedState({ seed: 1, fleet: parseFleet(`${workgroups}x${perWorkgroup}`) });
  for (const [index, workgroup] of state.workgroups.entries())
    workgroup.name = `${part(index)}-${workgroup.name}`;
  for (const workspace of state.workspaces) {
    Object.assign(workspace, { status: 'Active', display_status: 'Running', condition_type: 'Ready' });
  }
  state.transitions = [];
  return state;
}

/** The simulator child: answers `fleet` (new all-Active fleet), `reset` (back to it) and `paused` over IPC. */
export async function serveSimulator(latencyMs: number): Promise<void> {
  const sim = await startSimulator({
    apiKey: API_KEY,
    state: allActiveState({ workgroups: 1, perWorkgroup: 1 }),
    faults: { latencyMs },
    // no transition completes during a run: the fleet only changes by the benchmark's calls
    transitionMs: 3_600_000,
  });
  process.on('message', (request: SimRequest) => {
    let reply: SimReply = {};
    if (request.op === 'fleet') {
      sim.reset({ state: allActiveState(request.fleet) });
      reply = { workspaces: sim.state.workspaces.length };
    } else if (request.op === 'reset') {
      sim.reset();
      reply = { workspaces: sim.state.workspaces.length };
    } else {
      reply = { paused: sim.state.workspaces.filter((ws) => ws.status !== 'Active').length };
    }
    process.send?.(reply);
  });
  process.once('SIGTERM', () => void sim.close().then(() => process.exit(0)));
  process.send?.({ url: sim.url } satisfies SimReply);
}

export class SimChild {
  constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  /** Forks `script` (the benchmark) with `--serve`, which runs `serveSimulator` there. */
  static async start(script: string, latencyMs: string): Promise<SimChild> {
    const child = fork(script, ['--serve', '--latency-ms', latencyMs], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const [reply] = (await once(child, 'message')) as [SimReply];
    return new SimChild(child, reply.url as string);
  }

  async ask(request: SimRequest): Promise<SimReply> {
    const reply = once(this.child, 'message') as Promise<[SimReply]>;
    this.child.send(request);
    return (await reply)[0];
  }
}

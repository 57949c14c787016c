import { type Fleet, type SimState, seedState } from '../../src/sim/index.js';

/** A seeded fleet whose every workspace is Active and no transition under way: a pause has something to do everywhere. */
export function activeFleet(fleet: Fleet, seed: number): SimState {
  const state = seedState({ seed, fleet });
  for (const ws of state.workspaces)
    Object.assign(ws, { status: 'Active', display_status: 'Running', condition_type: 'Ready' });
  state.transitions = [];
  return state;
}

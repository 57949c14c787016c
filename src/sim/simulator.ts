import type { Clock } from '../time/index.js';
import { type FaultConfig, FaultInjector } from './faults.js';
import type { Fleet } from './fleet.js';
import { Lifecycle } from './lifecycle.js';
import type { SimContext } from './operations/index.js';
import { RenderCache } from './render.js';
import { RequestLog } from './request-log.js';
import { seedState } from './seed.js';
import type { OrgUsersShape, SimState, Transition } from './state.js';
import { parseState } from './state-file.js';
import { SimStore } from './store.js';

/** What a reset goes back to: a given state, a freshly seeded fleet, or (empty) the start state. */
export interface ResetTarget {
  seed?: number;
  fleet?: Fleet;
  /** Validated like a `--state` file. */
  state?: unknown;
}

export interface SimulatorCoreOptions {
  seed: number;
  fleet: Fleet;
  /** A state to start from instead of the seeded fleet. */
  state?: unknown;
  faults: FaultConfig;
  transitionMs: number;
  clock: Clock;
  /** Overrides the state's `settings.org_users_shape`, after every reset too. */
  orgUsersShape?: OrgUsersShape;
  requestLogLimit: number;
  onTransition?: (transition: Transition) => void;
}

/** The simulator without HTTP: state, timed transitions, faults and the request log. */
export class Simulator {
  readonly store: SimStore;
  readonly cache: RenderCache;
  readonly lifecycle: Lifecycle;
  readonly faults: FaultInjector;
  readonly requestLog: RequestLog;
  readonly context: SimContext;
  #baseline: SimState;
  #seed: number;
  #fleet: Fleet;

  constructor(readonly options: SimulatorCoreOptions) {
    this.#seed = options.seed;
    this.#fleet = options.fleet;
    this.#baseline =
      options.state === undefined
        ? seedState({ seed: options.seed, fleet: options.fleet })
        : parseState(options.state, 'state');
    this.store = new SimStore(this.#startingState());
    this.cache = new RenderCache(this.store);
    this.lifecycle = new Lifecycle(this.store, {
      transitionMs: options.transitionMs,
      clock: options.clock,
      onComplete: options.onTransition,
    });
    this.faults = new FaultInjector(options.faults);
    this.requestLog = new RequestLog(options.requestLogLimit);
    this.context = { store: this.store, cache: this.cache, lifecycle: this.lifecycle, clock: options.clock };
    this.lifecycle.scheduleAll();
  }

  /**
   * Back to a starting state, with the start-up faults and an empty request log. A target
   * becomes the new starting state for later resets. Throws StateError for an invalid state.
   */
  reset(target: ResetTarget = {}): void {
    if (target.state !== undefined) {
      this.#baseline = parseState(target.state, 'state');
    } else if (target.seed !== undefined || target.fleet !== undefined) {
      this.#seed = target.seed ?? this.#seed;
      this.#fleet = target.fleet ?? this.#fleet;
      this.#baseline = seedState({ seed: this.#seed, fleet: this.#fleet });
    }
    this.lifecycle.cancelAll();
    this.store.replace(this.#startingState());
    this.lifecycle.scheduleAll();
    this.faults.configure(this.options.faults);
    this.requestLog.clear();
  }

  close(): void {
    this.lifecycle.cancelAll();
  }

  #startingState(): SimState {
    const state = structuredClone(this.#baseline);
    if (this.options.orgUsersShape) state.settings.org_users_shape = this.options.orgUsersShape;
    return state;
  }
}

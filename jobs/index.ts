import { type ActionRegistry, createActionRegistry } from '../src/policy/index.js';
import type { Action } from '../src/runs/index.js';
import { pause } from './pause.js';
import { resume } from './resume.js';

const all: readonly Action[] = [pause, resume] as readonly Action[];

/** The actions as the policy layer sees them (name, schema, scope, example); a name given twice throws. */
export const actionRegistry: ActionRegistry = createActionRegistry(all);

/** Every action, by name, as the engine runs them. Add an action by adding its module to `all`. */
export const actions: ReadonlyMap<string, Action> = new Map(all.map((action) => [action.name, action]));

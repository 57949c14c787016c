import { type ActionRegistry, createActionRegistry } from '../src/policy/index.js';
import { pause } from './pause.js';
import { resume } from './resume.js';

/** Every action a policy may use. Add an action by adding its module here. */
export const actionRegistry: ActionRegistry = createActionRegistry([pause, resume]);

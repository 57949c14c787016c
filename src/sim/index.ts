export type { Clock } from '../time/index.js';
export { OPERATION_NAMES, OPERATION_ROUTES, type OperationName } from './catalog.js';
export type { FaultConfig, FaultConfigInput } from './faults.js';
export { FaultConfigSchema } from './faults.js';
export { DEFAULT_FLEET, type Fleet, formatFleet, MAX_FLEET, parseFleet } from './fleet.js';
export type { RequestLogEntry } from './request-log.js';
export { seedState } from './seed.js';
export {
  DEFAULT_API_KEY,
  DEFAULT_BEARER_TOKEN,
  DEFAULT_TRANSITION_MS,
  type SimulatorHandle,
  type SimulatorOptions,
  startSimulator,
} from './server.js';
export type { ResetTarget } from './simulator.js';
export { type OrgUsersShape, type SimState, SimStateSchema, STATE_FORMAT } from './state.js';
export { loadStateFile, parseState, StateError } from './state-file.js';

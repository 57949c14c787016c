export { watchPolicy } from './policy-watcher.js';
export { Scheduler } from './scheduler.js';

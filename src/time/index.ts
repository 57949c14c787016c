export { type Clock, systemClock, type Timer } from './clock.js';

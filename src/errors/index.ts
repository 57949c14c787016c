export { isNightshiftError, NightshiftError } from './nightshift-error.js';

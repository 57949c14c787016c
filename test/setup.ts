import { afterAll } from 'vitest';
import { killLeftoverClis } from './helpers/processes.js';

// whatever a test file started and did not stop (a failure, a timeout) goes with it
afterAll(killLeftoverClis);

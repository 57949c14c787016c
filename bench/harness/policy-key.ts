import { randomBytes } from 'node:crypto';
import { PolicyKeyring } from '../../src/store/index.js';

/**
 * The policy key (NIGHTSHIFT_POLICY_KEY) of everything a benchmark, the chaos drill or a test file
 * starts: the policies they store are signed with it and the workers they start check with it. Made
 * afresh in each process that loads this module, so no key is ever written down.
 */
export const HARNESS_POLICY_KEY = randomBytes(32).toString('hex');

/** The keyring of {@link HARNESS_POLICY_KEY}, for the stores and workers built in this process. */
export function harnessKeyring(): PolicyKeyring {
  return PolicyKeyring.of([HARNESS_POLICY_KEY]);
}

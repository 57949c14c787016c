import { describe } from 'vitest';
import { MemoryOwnershipLedger } from '../../../src/engine/index.js';
import { ledgerContract } from '../../helpers/ledger-contract.js';

describe('MemoryOwnershipLedger keeps the ledger’s rules', () => {
  ledgerContract(() => {
    const ledger = new MemoryOwnershipLedger();
    return { ledger, intervals: async () => ledger.intervals };
  });
});

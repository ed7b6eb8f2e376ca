import { describe, expect, it } from 'vitest';
import {
  ALL_TRANSACTION_STATES,
  TRANSACTION_STATE_NAMES,
  TransactionState,
  hasPendingTransaction,
  isExpirationAllowed,
  isValidTransition,
  transactionStateFromId,
} from './transaction-state.js';

// Kafka 3.x's validPreviousStates (TransactionMetadata.scala), written out as "from → to" pairs,
// independently of the table under test.
const ALLOWED = new Set([
  'Empty→Empty',
  'CompleteCommit→Empty',
  'CompleteAbort→Empty',
  'Ongoing→Ongoing',
  'Empty→Ongoing',
  'CompleteCommit→Ongoing',
  'CompleteAbort→Ongoing',
  'Ongoing→PrepareCommit',
  'Ongoing→PrepareAbort',
  'PrepareEpochFence→PrepareAbort',
  'PrepareCommit→CompleteCommit',
  'PrepareAbort→CompleteAbort',
  'Empty→Dead',
  'CompleteAbort→Dead',
  'CompleteCommit→Dead',
  'Ongoing→PrepareEpochFence',
]);

describe('transaction-state – states and transitions', () => {
  it('transaction-state – each state is the byte Kafka writes in __transaction_state', () => {
    expect(TransactionState).toEqual({
      Empty: 0,
      Ongoing: 1,
      PrepareCommit: 2,
      PrepareAbort: 3,
      CompleteCommit: 4,
      CompleteAbort: 5,
      Dead: 6,
      PrepareEpochFence: 7,
    });
    for (const [name, id] of Object.entries(TransactionState)) expect(TRANSACTION_STATE_NAMES[id]).toBe(name);
    expect(ALL_TRANSACTION_STATES).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('transaction-state – every (from, to) pair is allowed exactly when Kafka allows it', () => {
    let pairs = 0;
    let allowed = 0;
    for (const from of ALL_TRANSACTION_STATES) {
      for (const to of ALL_TRANSACTION_STATES) {
        const key = `${TRANSACTION_STATE_NAMES[from]}→${TRANSACTION_STATE_NAMES[to]}`;
        expect(isValidTransition(from, to), key).toBe(ALLOWED.has(key));
        pairs++;
        if (ALLOWED.has(key)) allowed++;
      }
    }
    expect(pairs).toBe(64);
    expect(allowed).toBe(ALLOWED.size);
  });

  it('transaction-state – fromId accepts 0–7 and throws on any other byte', () => {
    for (const id of ALL_TRANSACTION_STATES) expect(transactionStateFromId(id)).toBe(id);
    for (const bad of [-1, 8, 127, 1.5]) expect(() => transactionStateFromId(bad)).toThrow(/Unknown transaction state id/);
  });

  it('transaction-state – pending transactions are Ongoing, PrepareCommit and PrepareAbort', () => {
    const pending = ALL_TRANSACTION_STATES.filter(hasPendingTransaction).map((s) => TRANSACTION_STATE_NAMES[s]);
    expect(pending).toEqual(['Ongoing', 'PrepareCommit', 'PrepareAbort']);
  });

  it('transaction-state – expiration is allowed in Empty, CompleteCommit and CompleteAbort only', () => {
    const expirable = ALL_TRANSACTION_STATES.filter(isExpirationAllowed).map((s) => TRANSACTION_STATE_NAMES[s]);
    expect(expirable).toEqual(['Empty', 'CompleteCommit', 'CompleteAbort']);
  });
});

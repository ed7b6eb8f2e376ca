/**
 * A transactional id's states and their legal transitions, as a transition table (Kafka's
 * TransactionState objects and their `validPreviousStates`, kafka.coordinator.transaction).
 * The ids are the byte each state is written as (TransactionStatus) in `__transaction_state`.
 */
export const TransactionState = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
} as const;
export type TransactionState = (typeof TransactionState)[keyof typeof TransactionState];
export type TransactionStateName = keyof typeof TransactionState;

const { Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence } = TransactionState;

/** Every state, in id order. */
export const ALL_TRANSACTION_STATES: readonly TransactionState[] = [
  Empty,
  Ongoing,
  PrepareCommit,
  PrepareAbort,
  CompleteCommit,
  CompleteAbort,
  Dead,
  PrepareEpochFence,
];

/** State id → name, as DescribeTransactions and ListTransactions report it ("Empty", "Ongoing", …). */
export const TRANSACTION_STATE_NAMES: Readonly<Record<TransactionState, TransactionStateName>> = {
  0: 'Empty',
  1: 'Ongoing',
  2: 'PrepareCommit',
  3: 'PrepareAbort',
  4: 'CompleteCommit',
  5: 'CompleteAbort',
  6: 'Dead',
  7: 'PrepareEpochFence',
};

/** target state → states it may be entered from (Kafka's validPreviousStates). */
export const TRANSACTION_TRANSITIONS: Readonly<Record<TransactionState, readonly TransactionState[]>> = {
  [Empty]: [Empty, CompleteCommit, CompleteAbort],
  [Ongoing]: [Ongoing, Empty, CompleteCommit, CompleteAbort],
  [PrepareCommit]: [Ongoing],
  [PrepareAbort]: [Ongoing, PrepareEpochFence],
  [CompleteCommit]: [PrepareCommit],
  [CompleteAbort]: [PrepareAbort],
  [Dead]: [Empty, CompleteAbort, CompleteCommit],
  [PrepareEpochFence]: [Ongoing],
};

export function isValidTransition(from: TransactionState, to: TransactionState): boolean {
  return TRANSACTION_TRANSITIONS[to].includes(from);
}

/** Kafka's TransactionState.fromId: the state a TransactionStatus byte stands for; throws on any other byte. */
export function transactionStateFromId(id: number): TransactionState {
  if (Number.isInteger(id) && id >= Empty && id <= PrepareEpochFence) return id as TransactionState;
  throw new Error(`Unknown transaction state id ${id} from the transaction status message`);
}

/**
 * Kafka's TransactionMetadata.hasPendingTransaction: a transaction is open (partitions added, or
 * its markers not yet written) in Ongoing, PrepareCommit and PrepareAbort. The producer id cannot
 * be rotated then.
 */
export function hasPendingTransaction(state: TransactionState): boolean {
  return state === Ongoing || state === PrepareCommit || state === PrepareAbort;
}

/**
 * Kafka's TransactionState.isExpirationAllowed: only a transactional id with no transaction in
 * flight (Empty, CompleteCommit, CompleteAbort) may expire after transactional.id.expiration.ms.
 */
export function isExpirationAllowed(state: TransactionState): boolean {
  return state === Empty || state === CompleteCommit || state === CompleteAbort;
}

import { describe, expect, it } from 'vitest';
import { DEFAULT_TRANSACTION_STATE_LOG_NUM_PARTITIONS, TRANSACTION_STATE_TOPIC_NAME, partitionForTransactionalId } from './transaction-partitioner.js';

/** java.lang.String.hashCode written out plainly with BigInt: sum of s[i]*31^(n-1-i), wrapped to int32. */
function referenceHashCode(s: string): number {
  let h = 0n;
  for (let i = 0; i < s.length; i++) h = h * 31n + BigInt(s.charCodeAt(i));
  return Number(BigInt.asIntN(32, h));
}

describe('transaction-partitioner – coordinator partition of a transactional id', () => {
  it('transaction-partitioner – the topic is __transaction_state with 50 partitions by default', () => {
    expect(TRANSACTION_STATE_TOPIC_NAME).toBe('__transaction_state');
    expect(DEFAULT_TRANSACTION_STATE_LOG_NUM_PARTITIONS).toBe(50);
  });

  it('transaction-partitioner – literal hashCodes: "txn-1" → 110810510 → 10 of 50', () => {
    // "txn-1".hashCode() = 116*31^4 + 120*31^3 + 110*31^2 + 45*31 + 49 = 110810510, "a".hashCode() = 97
    expect(referenceHashCode('txn-1')).toBe(110810510);
    expect(partitionForTransactionalId('txn-1')).toBe(10);
    expect(partitionForTransactionalId('a')).toBe(97 % 50);
    expect(partitionForTransactionalId('')).toBe(0);
  });

  it('transaction-partitioner – Integer.MIN_VALUE hashes map to partition 0 (Utils.abs)', () => {
    // "polygenelubricants".hashCode() == Integer.MIN_VALUE
    expect(referenceHashCode('polygenelubricants')).toBe(-2147483648);
    expect(partitionForTransactionalId('polygenelubricants', 50)).toBe(0);
    expect(partitionForTransactionalId('polygenelubricants', 7)).toBe(0);
  });

  it('transaction-partitioner – agrees with an independent hashCode for many ids and partition counts', () => {
    const ids = ['txn-1', 'txn-2', 'my-transactional-id', 'producer-ä-😀', 'Aa', 'BB'];
    for (let i = 0; i < 200; i++) ids.push(`tx-${i}-${'z'.repeat(i % 13)}`);
    let negatives = 0;
    for (const id of ids) {
      const h = referenceHashCode(id);
      if (h < 0) negatives++;
      for (const n of [1, 3, 50, 64]) expect(partitionForTransactionalId(id, n), `${id} % ${n}`).toBe(Math.abs(h) % n);
    }
    expect(negatives).toBeGreaterThan(0);
  });
});

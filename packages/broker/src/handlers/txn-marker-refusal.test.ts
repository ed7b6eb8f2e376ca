import { describe, expect, it } from 'vitest';
import { TxnMarkerRefusal } from './txn-marker-refusal.js';

describe('txn marker refusal', () => {
  it('txn marker refusal – unset or empty refuses nothing', () => {
    expect(TxnMarkerRefusal.parse(undefined)).toBeUndefined();
    expect(TxnMarkerRefusal.parse(' ')).toBeUndefined();
  });

  it('txn marker refusal – a count refuses that many markers of the topic, no count all of them, other topics none', () => {
    const r = TxnMarkerRefusal.parse('blocked:2, always')!;
    expect(r.topics).toEqual(['blocked', 'always']);
    expect([r.refuse('blocked'), r.refuse('blocked'), r.refuse('blocked')]).toEqual([true, true, false]);
    expect(Array.from({ length: 5 }, () => r.refuse('always'))).toEqual([true, true, true, true, true]);
    expect(r.refuse('other')).toBe(false);
  });

  it('txn marker refusal – a malformed value is rejected with the variable named', () => {
    expect(() => TxnMarkerRefusal.parse('a:b')).toThrow(/SAMSA_TEST_REFUSE_TXN_MARKERS: expected <topic>\[:<count>\]/);
    expect(() => TxnMarkerRefusal.parse('a,,b')).toThrow(/got ''/);
  });
});

import { describe, expect, it } from 'vitest';
import { ProtocolDecodeError } from '@samsa/protocol';
import {
  decodeTransactionLogKey,
  decodeTransactionLogRecord,
  decodeTransactionLogValue,
  encodeTransactionLogKey,
  encodeTransactionLogRecord,
  encodeTransactionLogValue,
  type TransactionLogValue,
} from './transaction-log.js';
import { TransactionState } from './transaction-state.js';

/** Hex from commented byte groups: whitespace and `// …` comments are dropped. */
const hex = (s: string) => Buffer.from(s.replace(/\/\/.*$/gm, '').replace(/\s+/g, ''), 'hex');

const ongoing: TransactionLogValue = {
  producerId: 1000n,
  producerEpoch: 5,
  transactionTimeoutMs: 60000,
  state: TransactionState.Ongoing,
  partitions: [{ topic: 't', partitionIds: [0, 2] }],
  lastUpdateTimestampMs: 1700000000000,
  startTimestampMs: 1699999999000,
};

// Built by hand from TransactionLogValue.json (v0: non-flexible).
const ONGOING_V0 = hex(`
  0000                  // value version 0
  00000000000003e8      // ProducerId 1000
  0005                  // ProducerEpoch 5
  0000ea60              // TransactionTimeoutMs 60000
  01                    // TransactionStatus Ongoing
  00000001              // TransactionPartitions: 1 entry (int32 count)
    0001 74             //   Topic "t" (int16 length)
    00000002            //   PartitionIds: 2 entries
      00000000          //     0
      00000002          //     2
  0000018bcfe56800      // TransactionLastUpdateTimestampMs 1700000000000
  0000018bcfe56418      // TransactionStartTimestampMs 1699999999000
`);

// v1: flexible — compact lengths (count + 1, unsigned varint) and empty tagged-field sections.
const ONGOING_V1 = hex(`
  0001                  // value version 1
  00000000000003e8      // ProducerId 1000
  0005                  // ProducerEpoch 5
  0000ea60              // TransactionTimeoutMs 60000
  01                    // TransactionStatus Ongoing
  02                    // TransactionPartitions: 1 entry (compact: 1 + 1)
    02 74               //   Topic "t" (compact: length 1 + 1)
    03                  //   PartitionIds: 2 entries (compact)
      00000000          //     0
      00000002          //     2
    00                  //   entry's tagged fields: none
  0000018bcfe56800      // TransactionLastUpdateTimestampMs
  0000018bcfe56418      // TransactionStartTimestampMs
  00                    // tagged fields: none
`);

const empty: TransactionLogValue = {
  producerId: 7n,
  producerEpoch: 0,
  transactionTimeoutMs: 1000,
  state: TransactionState.Empty,
  partitions: null,
  lastUpdateTimestampMs: 0,
  startTimestampMs: -1,
};

describe('transaction-log – TransactionLogKey', () => {
  it('transaction-log – key v0 is int16 version 0 then the transactional id as an int16-length string', () => {
    const key = encodeTransactionLogKey('txn-1');
    expect(key).toEqual(hex(`0000  0005 74786e2d31 // version 0, "txn-1"`));
    expect(decodeTransactionLogKey(key)).toBe('txn-1');
  });

  it('transaction-log – a key of another version or truncated fails to decode', () => {
    expect(() => decodeTransactionLogKey(hex('0001 0001 61'))).toThrow(/TransactionLogKey: unknown TransactionLogKey version 1/);
    expect(() => decodeTransactionLogKey(hex('0000 0005 74786e'))).toThrow(ProtocolDecodeError);
    expect(() => decodeTransactionLogKey(hex('00'))).toThrow(/truncated/);
  });
});

describe('transaction-log – TransactionLogValue', () => {
  it('transaction-log – value v0 golden bytes', () => {
    expect(encodeTransactionLogValue(ongoing)).toEqual(ONGOING_V0);
    expect(encodeTransactionLogValue(ongoing, 0)).toEqual(ONGOING_V0);
    expect(decodeTransactionLogValue(ONGOING_V0)).toEqual(ongoing);
  });

  it('transaction-log – value v1 golden bytes (flexible)', () => {
    expect(encodeTransactionLogValue(ongoing, 1)).toEqual(ONGOING_V1);
    expect(decodeTransactionLogValue(ONGOING_V1)).toEqual(ongoing);
  });

  it('transaction-log – null partitions (Empty) are int32 -1 in v0 and varint 0 in v1', () => {
    const v0 = hex(`
      0000 0000000000000007 0000 000003e8 00 // v0, ProducerId 7, epoch 0, timeout 1000, Empty
      ffffffff                               // TransactionPartitions null
      0000000000000000 ffffffffffffffff      // last update 0, start -1
    `);
    const v1 = hex(`
      0001 0000000000000007 0000 000003e8 00 // v1, ProducerId 7, epoch 0, timeout 1000, Empty
      00                                     // TransactionPartitions null (compact)
      0000000000000000 ffffffffffffffff 00   // last update 0, start -1, no tagged fields
    `);
    expect(encodeTransactionLogValue(empty, 0)).toEqual(v0);
    expect(encodeTransactionLogValue(empty, 1)).toEqual(v1);
    expect(decodeTransactionLogValue(v0)).toEqual(empty);
    expect(decodeTransactionLogValue(v1)).toEqual(empty);
  });

  it('transaction-log – values round-trip at both versions (every state, several topics, empty lists)', () => {
    for (const state of Object.values(TransactionState)) {
      for (const partitions of [
        null,
        [],
        [{ topic: 'a', partitionIds: [] }],
        [
          { topic: 'orders', partitionIds: [3, 1] },
          { topic: 'ü-topic', partitionIds: [0] },
        ],
      ]) {
        const v: TransactionLogValue = { ...ongoing, state, partitions, producerId: 9007199254740993n, producerEpoch: 32766 };
        for (const version of [0, 1] as const) expect(decodeTransactionLogValue(encodeTransactionLogValue(v, version))).toEqual(v);
      }
    }
  });

  it('transaction-log – v1 tagged fields it does not know (Kafka 4.0 adds some) are skipped', () => {
    const withTag = Buffer.concat([ONGOING_V1.subarray(0, -1), hex('01 00 08 000000000000002a // 1 tagged field: tag 0, 8 bytes')]);
    expect(decodeTransactionLogValue(withTag)).toEqual(ongoing);
  });

  it('transaction-log – every truncation of a v0 or v1 value fails with a decode error', () => {
    for (const full of [ONGOING_V0, ONGOING_V1]) {
      for (let n = 0; n < full.length; n++) {
        // a missing field reads as "truncated …"; a count larger than the bytes left as "… exceeds …"
        const decode = () => decodeTransactionLogValue(full.subarray(0, n));
        expect(decode, `${n} of ${full.length} bytes`).toThrow(ProtocolDecodeError);
        expect(decode, `${n} of ${full.length} bytes`).toThrow(/^TransactionLogValue: (truncated|.* exceeds )/);
      }
    }
  });

  it('transaction-log – an unknown value version or status byte fails to decode', () => {
    for (const version of ['0002', 'ffff']) {
      const buf = Buffer.concat([hex(version), ONGOING_V0.subarray(2)]);
      expect(() => decodeTransactionLogValue(buf)).toThrow(/unknown TransactionLogValue version/);
    }
    const badStatus = Buffer.from(ONGOING_V0);
    badStatus[16] = 8; // TransactionStatus sits after version 2 + id 8 + epoch 2 + timeout 4 bytes
    expect(() => decodeTransactionLogValue(badStatus)).toThrow(/unknown transaction status 8/);
  });
});

describe('transaction-log – records', () => {
  it('transaction-log – a record is the key and the value; a null value is a tombstone', () => {
    const rec = encodeTransactionLogRecord('txn-1', ongoing, 1);
    expect(rec.key).toEqual(encodeTransactionLogKey('txn-1'));
    expect(rec.value).toEqual(ONGOING_V1);
    expect(decodeTransactionLogRecord(rec.key, rec.value)).toEqual({ transactionalId: 'txn-1', value: ongoing });
    const tombstone = encodeTransactionLogRecord('txn-1', null);
    expect(tombstone.value).toBeNull();
    expect(decodeTransactionLogRecord(tombstone.key, null)).toEqual({ transactionalId: 'txn-1', value: null });
  });
});

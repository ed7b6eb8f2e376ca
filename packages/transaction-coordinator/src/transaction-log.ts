/**
 * The records the transaction coordinator keeps in `__transaction_state`, byte for byte as Kafka
 * writes them (version-prefixed, Kafka's TransactionLogKey/TransactionLogValue schemas):
 *
 *   TransactionLogKey   v0: transactionalId string
 *   TransactionLogValue v0: producerId int64, producerEpoch int16, transactionTimeoutMs int32,
 *                           transactionStatus int8, transactionPartitions [topic string,
 *                           partitionIds [int32]] (nullable), transactionLastUpdateTimestampMs int64,
 *                           transactionStartTimestampMs int64
 *                       v1: v0, flexible (compact strings and arrays, tagged fields)
 *
 * Kafka 3.x writes value v0 (v1 only once transaction.version 1 is enabled, in 4.0) and writes
 * null partitions for an Empty transaction. A null value is a tombstone: the transactional id is
 * gone. Decoding is strict: an unknown key or value version, an unknown status byte or truncated
 * bytes throw a ProtocolDecodeError. Tagged fields of v1 (Kafka 4.0 adds some) are skipped.
 */
import { ProtocolDecodeError, Reader, Writer } from '@samsa/protocol';
import { transactionStateFromId, type TransactionState } from './transaction-state.js';

export const TRANSACTION_LOG_KEY_VERSION = 0;
export type TransactionLogValueVersion = 0 | 1;

export interface TxnPartitions {
  topic: string;
  partitionIds: number[];
}

export interface TransactionLogValue {
  producerId: bigint;
  producerEpoch: number;
  transactionTimeoutMs: number;
  state: TransactionState;
  /** null: none recorded (what Kafka writes for Empty). */
  partitions: TxnPartitions[] | null;
  lastUpdateTimestampMs: number;
  /** -1 when no transaction has started. */
  startTimestampMs: number;
}

/** One `__transaction_state` record: its key and value bytes; a null value is a tombstone. */
export interface TransactionLogRecord {
  key: Buffer;
  value: Buffer | null;
}

export function encodeTransactionLogKey(transactionalId: string): Buffer {
  const w = new Writer(4 + Buffer.byteLength(transactionalId));
  w.writeInt16(TRANSACTION_LOG_KEY_VERSION);
  w.writeString(transactionalId);
  return w.toBuffer();
}

/** The transactional id of a TransactionLogKey; throws on any key version but 0. */
export function decodeTransactionLogKey(buf: Buffer): string {
  return decoding('TransactionLogKey', () => {
    const r = new Reader(buf);
    const version = r.readInt16();
    if (version !== TRANSACTION_LOG_KEY_VERSION) r.fail(`unknown TransactionLogKey version ${version}`, 0);
    return r.readString();
  });
}

/** TransactionLogValue at `version` (0 by default, what Kafka 3.x writes). */
export function encodeTransactionLogValue(v: TransactionLogValue, version: TransactionLogValueVersion = 0): Buffer {
  const flexible = version >= 1;
  const w = new Writer(64);
  w.writeInt16(version);
  w.writeInt64(v.producerId);
  w.writeInt16(v.producerEpoch);
  w.writeInt32(v.transactionTimeoutMs);
  w.writeInt8(v.state);
  const parts = v.partitions;
  if (flexible) w.writeCompactArrayLength(parts === null ? -1 : parts.length);
  else w.writeArrayLength(parts === null ? -1 : parts.length);
  for (const p of parts ?? []) {
    if (flexible) {
      w.writeCompactString(p.topic);
      w.writeCompactArrayLength(p.partitionIds.length);
    } else {
      w.writeString(p.topic);
      w.writeArrayLength(p.partitionIds.length);
    }
    for (const id of p.partitionIds) w.writeInt32(id);
    if (flexible) w.writeTaggedFields(undefined);
  }
  w.writeInt64(BigInt(v.lastUpdateTimestampMs));
  w.writeInt64(BigInt(v.startTimestampMs));
  if (flexible) w.writeTaggedFields(undefined);
  return w.toBuffer();
}

export function decodeTransactionLogValue(buf: Buffer): TransactionLogValue {
  return decoding('TransactionLogValue', () => {
    const r = new Reader(buf);
    const version = r.readInt16();
    if (version !== 0 && version !== 1) r.fail(`unknown TransactionLogValue version ${version}`, 0);
    const flexible = version >= 1;
    const producerId = r.readInt64();
    const producerEpoch = r.readInt16();
    const transactionTimeoutMs = r.readInt32();
    const statusAt = r.offset;
    const status = r.readInt8();
    let state: TransactionState;
    try {
      state = transactionStateFromId(status);
    } catch (e) {
      throw new ProtocolDecodeError(`unknown transaction status ${status}`, statusAt, { cause: e });
    }
    // each element is at least a topic and a partition count: 2 + 4 bytes (v0), 1 + 1 + 1 (v1)
    const n = flexible ? r.readCompactArrayLength(3, true) : r.readArrayLength(6, true);
    let partitions: TxnPartitions[] | null = null;
    if (n >= 0) {
      partitions = [];
      for (let i = 0; i < n; i++) {
        const topic = flexible ? r.readCompactString() : r.readString();
        const k = flexible ? r.readCompactArrayLength(4, false) : r.readArrayLength(4, false);
        const partitionIds: number[] = [];
        for (let j = 0; j < k; j++) partitionIds.push(r.readInt32());
        if (flexible) r.skipTaggedFields();
        partitions.push({ topic, partitionIds });
      }
    }
    const lastUpdateTimestampMs = Number(r.readInt64());
    const startTimestampMs = Number(r.readInt64());
    if (flexible) r.skipTaggedFields();
    return {
      producerId,
      producerEpoch,
      transactionTimeoutMs,
      state,
      partitions,
      lastUpdateTimestampMs,
      startTimestampMs,
    };
  });
}

/** The record for a transactional id's new metadata, or its tombstone (value null). */
export function encodeTransactionLogRecord(
  transactionalId: string,
  value: TransactionLogValue | null,
  version: TransactionLogValueVersion = 0,
): TransactionLogRecord {
  return {
    key: encodeTransactionLogKey(transactionalId),
    value: value === null ? null : encodeTransactionLogValue(value, version),
  };
}

/** A `__transaction_state` record read back: value null for a tombstone (the id was removed). */
export function decodeTransactionLogRecord(key: Buffer, value: Buffer | null): { transactionalId: string; value: TransactionLogValue | null } {
  return {
    transactionalId: decodeTransactionLogKey(key),
    value: value === null ? null : decodeTransactionLogValue(value),
  };
}

function decoding<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ProtocolDecodeError) throw e.withContext(what);
    throw e;
  }
}

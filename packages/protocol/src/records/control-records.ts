/**
 * Control records (batches with attributes bit 5): transaction markers written by the coordinator.
 *
 *   key:   version int16 (0), type int16 (0 = ABORT, 1 = COMMIT, ...)
 *   value: (end-transaction markers) version int16 (0), coordinatorEpoch int32
 */
import { KafkaError } from '../errors.js';
import { encodeRecordBatch } from './batch.js';

const INVALID_RECORD = 87;

export const ControlRecordType = {
  UNKNOWN: -1,
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
  SNAPSHOT_HEADER: 3,
  SNAPSHOT_FOOTER: 4,
  KRAFT_VERSION: 5,
  KRAFT_VOTERS: 6,
} as const;
export type ControlRecordType = (typeof ControlRecordType)[keyof typeof ControlRecordType];

const CONTROL_RECORD_KEY_SIZE = 4;
const END_TXN_MARKER_VALUE_SIZE = 6;

/** Parses a control record key; types this code does not know come back as UNKNOWN (-1). */
export function readControlRecordType(key: Buffer | null): ControlRecordType {
  if (key === null || key.length < CONTROL_RECORD_KEY_SIZE) {
    throw new KafkaError(INVALID_RECORD, `Invalid control record key size ${key === null ? 'null' : key.length}`);
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw new KafkaError(INVALID_RECORD, `Invalid version found for control record: ${version}`);
  const type = key.readInt16BE(2);
  return type >= 0 && type <= 6 ? (type as ControlRecordType) : ControlRecordType.UNKNOWN;
}

export interface EndTxnMarker {
  commit: boolean;
  coordinatorEpoch: number;
}

/** Decodes an end-transaction marker from a control record's key and value. */
export function readEndTxnMarker(key: Buffer | null, value: Buffer | null): EndTxnMarker {
  const type = readControlRecordType(key);
  if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) {
    throw new KafkaError(INVALID_RECORD, `Control record type ${type} is not a transaction marker`);
  }
  if (value === null || value.length < END_TXN_MARKER_VALUE_SIZE) {
    throw new KafkaError(INVALID_RECORD, `Invalid value size found for end transaction marker: ${value?.length ?? 'null'}`);
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw new KafkaError(INVALID_RECORD, `Invalid version found for end transaction marker: ${version}`);
  return { commit: type === ControlRecordType.COMMIT, coordinatorEpoch: value.readInt32BE(2) };
}

export interface EndTxnMarkerBatchInput {
  producerId: bigint | number;
  producerEpoch: number;
  commit: boolean;
  coordinatorEpoch: number;
  /** Default now. */
  timestamp?: bigint | number;
  baseOffset?: bigint | number;
  partitionLeaderEpoch?: number;
}

/** Encodes a transactional control batch holding one COMMIT or ABORT marker. */
export function encodeEndTxnMarkerBatch(input: EndTxnMarkerBatchInput): Buffer {
  const key = Buffer.alloc(CONTROL_RECORD_KEY_SIZE);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(input.commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, 2);
  const value = Buffer.alloc(END_TXN_MARKER_VALUE_SIZE);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(input.coordinatorEpoch, 2);
  const timestamp = input.timestamp ?? Date.now();
  return encodeRecordBatch({
    records: [{ key, value, timestamp }],
    baseOffset: input.baseOffset ?? 0,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? -1,
    producerId: input.producerId,
    producerEpoch: input.producerEpoch,
    baseSequence: -1,
    transactional: true,
    control: true,
  });
}

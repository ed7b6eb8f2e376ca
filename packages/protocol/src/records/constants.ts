/** Byte layout of a magic v2 record batch header (all big-endian). */
export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORDS_COUNT_OFFSET = 57;
export const RECORDS_OFFSET = 61;

/** Size of the v2 batch header; also the smallest possible v2 batch. */
export const RECORD_BATCH_OVERHEAD = 61;
/** baseOffset + batchLength: the part of a batch not counted in batchLength. */
export const LOG_OVERHEAD = 12;
/** Bytes needed to read the magic byte of a batch. */
export const HEADER_SIZE_UP_TO_MAGIC = 17;
/** Smallest legacy (v0) message; Kafka's first sanity bound on the length field. */
export const LEGACY_RECORD_OVERHEAD_V0 = 14;

export const CURRENT_MAGIC = 2;

/** Attribute bits. */
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_FLAG_MASK = 0x10;
export const CONTROL_FLAG_MASK = 0x20;
export const DELETE_HORIZON_FLAG_MASK = 0x40;

export const TimestampType = {
  CREATE_TIME: 0,
  LOG_APPEND_TIME: 1,
} as const;
export type TimestampType = (typeof TimestampType)[keyof typeof TimestampType];

export const NO_TIMESTAMP = -1n;
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

/** Kafka's default max.message.bytes (1 MiB + 12). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1048588;
/** Kafka's default segment.bytes (1 GiB). */
export const DEFAULT_SEGMENT_BYTES = 1073741824;

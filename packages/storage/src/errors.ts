/**
 * Typed errors of the log layer. Each is a KafkaError carrying the wire error code it maps to, so
 * `errorCodeOf` (the one place exceptions become codes) answers with it.
 */
import { KafkaError } from '@samsa/protocol';

export const LogErrorCode = {
  UNKNOWN_SERVER_ERROR: -1,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  MESSAGE_TOO_LARGE: 10,
  RECORD_LIST_TOO_LARGE: 18,
  INCONSISTENT_TOPIC_ID: 103,
  INCONSISTENT_CLUSTER_ID: 104,
  KAFKA_STORAGE_ERROR: 56,
  INVALID_RECORD: 87,
} as const;
export type LogErrorCode = (typeof LogErrorCode)[keyof typeof LogErrorCode];

export class LogError extends KafkaError {
  constructor(code: number, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'LogError';
  }
}

/** A fetch or ListOffsets offset outside [logStartOffset, logEndOffset]. */
export class OffsetOutOfRangeError extends LogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(LogErrorCode.OFFSET_OUT_OF_RANGE, message, options);
    this.name = 'OffsetOutOfRangeError';
  }
}

/** Bad batch framing, magic or CRC (in appended records or on disk). */
export class CorruptRecordError extends LogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(LogErrorCode.CORRUPT_MESSAGE, message, options);
    this.name = 'CorruptRecordError';
  }
}

/** A batch larger than max.message.bytes. */
export class RecordTooLargeError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.MESSAGE_TOO_LARGE, message);
    this.name = 'RecordTooLargeError';
  }
}

/** An append larger than segment.bytes (it could never fit a segment). */
export class RecordBatchTooLargeError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.RECORD_LIST_TOO_LARGE, message);
    this.name = 'RecordBatchTooLargeError';
  }
}

/** Follower append whose first offset is below the log end offset (Kafka's UnexpectedAppendOffsetException). */
export class UnexpectedAppendOffsetError extends LogError {
  constructor(
    message: string,
    readonly firstOffset: bigint,
    readonly lastOffset: bigint,
  ) {
    super(LogErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'UnexpectedAppendOffsetError';
  }
}

/** Follower append whose batches are not in increasing offset order (Kafka's OffsetsOutOfOrderException). */
export class OffsetsOutOfOrderError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'OffsetsOutOfOrderError';
  }
}

/** An index file that fails its sanity check; the owner rebuilds it from the log. */
export class CorruptIndexError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.KAFKA_STORAGE_ERROR, message);
    this.name = 'CorruptIndexError';
  }
}

/** A checkpoint file that cannot be parsed. */
export class CorruptCheckpointError extends LogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(LogErrorCode.KAFKA_STORAGE_ERROR, message, options);
    this.name = 'CorruptCheckpointError';
  }
}

/** An I/O failure on a log directory (Kafka's KafkaStorageException). */
export class KafkaStorageError extends LogError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(LogErrorCode.KAFKA_STORAGE_ERROR, message, options);
    this.name = 'KafkaStorageError';
  }
}

/** meta.properties of a log dir names another broker id (Kafka's InconsistentBrokerIdException). */
export class InconsistentBrokerIdError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'InconsistentBrokerIdError';
  }
}

/** meta.properties of a log dir names another cluster id (Kafka's InconsistentClusterIdException). */
export class InconsistentClusterIdError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.INCONSISTENT_CLUSTER_ID, message);
    this.name = 'InconsistentClusterIdError';
  }
}

/** partition.metadata names another topic id (Kafka's InconsistentTopicIdException). */
export class InconsistentTopicIdError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.INCONSISTENT_TOPIC_ID, message);
    this.name = 'InconsistentTopicIdError';
  }
}

/** Operation on a closed log or segment. */
export class LogClosedError extends LogError {
  constructor(message: string) {
    super(LogErrorCode.KAFKA_STORAGE_ERROR, message);
    this.name = 'LogClosedError';
  }
}

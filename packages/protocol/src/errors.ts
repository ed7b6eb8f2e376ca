/**
 * Kafka protocol error codes.
 *
 * Codes, names and retriability follow Apache Kafka 3.8 (`org.apache.kafka.common.protocol.Errors`);
 * the messages are Samsa's own wording. Retriable means the Java client treats the error as transient
 * (its exception extends `RetriableException`).
 *
 * `errorCodeOf()` is the single place where an arbitrary thrown value becomes a wire error code.
 */

interface ErrorSpec {
  readonly code: number;
  readonly retriable: boolean;
  readonly message: string;
}

export const KAFKA_ERRORS = {
  UNKNOWN_SERVER_ERROR: { code: -1, retriable: false, message: 'Unexpected server error while processing the request.' },
  NONE: { code: 0, retriable: false, message: 'No error.' },
  OFFSET_OUT_OF_RANGE: { code: 1, retriable: false, message: 'The requested offset is outside the range held by the server.' },
  CORRUPT_MESSAGE: { code: 2, retriable: true, message: 'The message failed its CRC check, has an invalid size or is otherwise corrupt.' },
  UNKNOWN_TOPIC_OR_PARTITION: { code: 3, retriable: true, message: 'This server does not host the topic-partition.' },
  INVALID_FETCH_SIZE: { code: 4, retriable: false, message: 'The requested fetch size is invalid.' },
  LEADER_NOT_AVAILABLE: { code: 5, retriable: true, message: 'The partition has no leader right now (an election is in progress).' },
  NOT_LEADER_OR_FOLLOWER: { code: 6, retriable: true, message: 'This broker is not the leader (or not a replica) of the partition.' },
  REQUEST_TIMED_OUT: { code: 7, retriable: true, message: 'The request timed out.' },
  BROKER_NOT_AVAILABLE: { code: 8, retriable: false, message: 'The broker is not available.' },
  REPLICA_NOT_AVAILABLE: { code: 9, retriable: true, message: 'The replica is not available for the requested partition.' },
  MESSAGE_TOO_LARGE: { code: 10, retriable: false, message: 'The batch is larger than the maximum message size the server accepts.' },
  STALE_CONTROLLER_EPOCH: { code: 11, retriable: false, message: 'The request came from a controller with an old epoch.' },
  OFFSET_METADATA_TOO_LARGE: { code: 12, retriable: false, message: 'The committed offset metadata is too large.' },
  NETWORK_EXCEPTION: { code: 13, retriable: true, message: 'The connection was closed before a response arrived.' },
  COORDINATOR_LOAD_IN_PROGRESS: { code: 14, retriable: true, message: 'The coordinator is still loading its state.' },
  COORDINATOR_NOT_AVAILABLE: { code: 15, retriable: true, message: 'The coordinator is not available.' },
  NOT_COORDINATOR: { code: 16, retriable: true, message: 'This broker is not the coordinator for the key.' },
  INVALID_TOPIC_EXCEPTION: { code: 17, retriable: false, message: 'The operation targets an invalid topic.' },
  RECORD_LIST_TOO_LARGE: { code: 18, retriable: false, message: 'The record batch is larger than the configured segment size.' },
  NOT_ENOUGH_REPLICAS: { code: 19, retriable: true, message: 'Rejected: fewer in-sync replicas than required.' },
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: { code: 20, retriable: true, message: 'Written, but to fewer in-sync replicas than required.' },
  INVALID_REQUIRED_ACKS: { code: 21, retriable: false, message: 'The produce request has an invalid acks value.' },
  ILLEGAL_GENERATION: { code: 22, retriable: false, message: 'The group generation id is not valid.' },
  INCONSISTENT_GROUP_PROTOCOL: { code: 23, retriable: false, message: "The member's protocols do not match the group's, or are empty." },
  INVALID_GROUP_ID: { code: 24, retriable: false, message: 'The group id is invalid.' },
  UNKNOWN_MEMBER_ID: { code: 25, retriable: false, message: 'The coordinator does not know this member.' },
  INVALID_SESSION_TIMEOUT: { code: 26, retriable: false, message: 'The session timeout is outside the range the broker allows.' },
  REBALANCE_IN_PROGRESS: { code: 27, retriable: false, message: 'The group is rebalancing; the member must rejoin.' },
  INVALID_COMMIT_OFFSET_SIZE: { code: 28, retriable: false, message: 'The committed offset data size is invalid.' },
  TOPIC_AUTHORIZATION_FAILED: { code: 29, retriable: false, message: 'Not authorized for the topic.' },
  GROUP_AUTHORIZATION_FAILED: { code: 30, retriable: false, message: 'Not authorized for the group.' },
  CLUSTER_AUTHORIZATION_FAILED: { code: 31, retriable: false, message: 'Not authorized for the cluster.' },
  INVALID_TIMESTAMP: { code: 32, retriable: false, message: 'A record timestamp is outside the accepted range.' },
  UNSUPPORTED_SASL_MECHANISM: { code: 33, retriable: false, message: 'The broker does not support the SASL mechanism.' },
  ILLEGAL_SASL_STATE: { code: 34, retriable: false, message: 'The request is not valid in the current SASL state.' },
  UNSUPPORTED_VERSION: { code: 35, retriable: false, message: 'The API version is not supported.' },
  TOPIC_ALREADY_EXISTS: { code: 36, retriable: false, message: 'A topic with this name already exists.' },
  INVALID_PARTITIONS: { code: 37, retriable: false, message: 'The number of partitions is invalid.' },
  INVALID_REPLICATION_FACTOR: { code: 38, retriable: false, message: 'The replication factor is invalid.' },
  INVALID_REPLICA_ASSIGNMENT: { code: 39, retriable: false, message: 'The replica assignment is invalid.' },
  INVALID_CONFIG: { code: 40, retriable: false, message: 'The configuration is invalid.' },
  NOT_CONTROLLER: { code: 41, retriable: true, message: 'This broker is not the active controller.' },
  INVALID_REQUEST: { code: 42, retriable: false, message: 'The request is malformed or not valid for this broker.' },
  UNSUPPORTED_FOR_MESSAGE_FORMAT: { code: 43, retriable: false, message: 'The message format version does not support the request.' },
  POLICY_VIOLATION: { code: 44, retriable: false, message: 'The request violates a configured policy.' },
  OUT_OF_ORDER_SEQUENCE_NUMBER: { code: 45, retriable: false, message: 'The broker received an out-of-order sequence number.' },
  DUPLICATE_SEQUENCE_NUMBER: { code: 46, retriable: false, message: 'The broker received a duplicate sequence number.' },
  INVALID_PRODUCER_EPOCH: { code: 47, retriable: false, message: 'The producer epoch is older than the current one.' },
  INVALID_TXN_STATE: { code: 48, retriable: false, message: 'The transactional operation is not valid in the current state.' },
  INVALID_PRODUCER_ID_MAPPING: { code: 49, retriable: false, message: 'The producer id is not assigned to this transactional id.' },
  INVALID_TRANSACTION_TIMEOUT: { code: 50, retriable: false, message: 'The transaction timeout exceeds the broker maximum.' },
  CONCURRENT_TRANSACTIONS: { code: 51, retriable: false, message: 'Another operation on the same transaction is in progress.' },
  TRANSACTION_COORDINATOR_FENCED: { code: 52, retriable: false, message: 'The transaction coordinator sending markers is no longer current.' },
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: { code: 53, retriable: false, message: 'Not authorized for the transactional id.' },
  SECURITY_DISABLED: { code: 54, retriable: false, message: 'Security features are disabled.' },
  OPERATION_NOT_ATTEMPTED: { code: 55, retriable: false, message: 'The operation was not attempted because another part of the batch failed.' },
  KAFKA_STORAGE_ERROR: { code: 56, retriable: true, message: 'A disk error occurred while accessing the log.' },
  LOG_DIR_NOT_FOUND: { code: 57, retriable: false, message: 'The log directory is not configured on the broker.' },
  SASL_AUTHENTICATION_FAILED: { code: 58, retriable: false, message: 'SASL authentication failed.' },
  UNKNOWN_PRODUCER_ID: { code: 59, retriable: false, message: 'The broker has no state for this producer id.' },
  REASSIGNMENT_IN_PROGRESS: { code: 60, retriable: false, message: 'A partition reassignment is in progress.' },
  DELEGATION_TOKEN_AUTH_DISABLED: { code: 61, retriable: false, message: 'Delegation tokens are not enabled.' },
  DELEGATION_TOKEN_NOT_FOUND: { code: 62, retriable: false, message: 'The delegation token was not found.' },
  DELEGATION_TOKEN_OWNER_MISMATCH: { code: 63, retriable: false, message: 'The principal is not the owner or renewer of the token.' },
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: { code: 64, retriable: false, message: 'Delegation token requests are not allowed on this channel.' },
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: { code: 65, retriable: false, message: 'Not authorized for the delegation token.' },
  DELEGATION_TOKEN_EXPIRED: { code: 66, retriable: false, message: 'The delegation token has expired.' },
  INVALID_PRINCIPAL_TYPE: { code: 67, retriable: false, message: 'The principal type is not supported.' },
  NON_EMPTY_GROUP: { code: 68, retriable: false, message: 'The group is not empty.' },
  GROUP_ID_NOT_FOUND: { code: 69, retriable: false, message: 'The group does not exist.' },
  FETCH_SESSION_ID_NOT_FOUND: { code: 70, retriable: true, message: 'The fetch session id is unknown.' },
  INVALID_FETCH_SESSION_EPOCH: { code: 71, retriable: true, message: 'The fetch session epoch is invalid.' },
  LISTENER_NOT_FOUND: { code: 72, retriable: true, message: 'The leader has no listener matching the one the metadata request used.' },
  TOPIC_DELETION_DISABLED: { code: 73, retriable: false, message: 'Topic deletion is disabled.' },
  FENCED_LEADER_EPOCH: { code: 74, retriable: true, message: "The request's leader epoch is older than the broker's." },
  UNKNOWN_LEADER_EPOCH: { code: 75, retriable: true, message: "The request's leader epoch is newer than the broker's." },
  UNSUPPORTED_COMPRESSION_TYPE: { code: 76, retriable: false, message: 'The client does not support the compression type in use.' },
  STALE_BROKER_EPOCH: { code: 77, retriable: false, message: 'The broker epoch has changed.' },
  OFFSET_NOT_AVAILABLE: { code: 78, retriable: true, message: 'The new leader has not caught up its high watermark yet.' },
  MEMBER_ID_REQUIRED: { code: 79, retriable: false, message: 'The member must obtain a member id before joining.' },
  PREFERRED_LEADER_NOT_AVAILABLE: { code: 80, retriable: true, message: 'The preferred leader is not available.' },
  GROUP_MAX_SIZE_REACHED: { code: 81, retriable: false, message: 'The group has reached its maximum size.' },
  FENCED_INSTANCE_ID: { code: 82, retriable: false, message: 'Another member registered with the same group.instance.id.' },
  ELIGIBLE_LEADERS_NOT_AVAILABLE: { code: 83, retriable: true, message: 'No eligible leader is available for the partition.' },
  ELECTION_NOT_NEEDED: { code: 84, retriable: true, message: 'The partition does not need a leader election.' },
  NO_REASSIGNMENT_IN_PROGRESS: { code: 85, retriable: false, message: 'No partition reassignment is in progress.' },
  GROUP_SUBSCRIBED_TO_TOPIC: { code: 86, retriable: false, message: 'Cannot delete offsets of a topic the group is subscribed to.' },
  INVALID_RECORD: { code: 87, retriable: false, message: 'A record failed broker-side validation.' },
  UNSTABLE_OFFSET_COMMIT: { code: 88, retriable: true, message: 'Unstable offsets are pending and must be resolved first.' },
  THROTTLING_QUOTA_EXCEEDED: { code: 89, retriable: true, message: 'The throttling quota was exceeded.' },
  PRODUCER_FENCED: { code: 90, retriable: false, message: 'A newer producer with the same transactional id fenced this one.' },
  RESOURCE_NOT_FOUND: { code: 91, retriable: false, message: 'The referenced resource does not exist.' },
  DUPLICATE_RESOURCE: { code: 92, retriable: false, message: 'The same resource was referenced twice.' },
  UNACCEPTABLE_CREDENTIAL: { code: 93, retriable: false, message: 'The credential does not meet the acceptance criteria.' },
  INCONSISTENT_VOTER_SET: { code: 94, retriable: false, message: 'The sender or receiver is not one of the expected voters.' },
  INVALID_UPDATE_VERSION: { code: 95, retriable: false, message: 'The update version is invalid.' },
  FEATURE_UPDATE_FAILED: { code: 96, retriable: false, message: 'Updating finalized features failed.' },
  PRINCIPAL_DESERIALIZATION_FAILURE: { code: 97, retriable: false, message: 'The forwarded request principal could not be deserialized.' },
  SNAPSHOT_NOT_FOUND: { code: 98, retriable: false, message: 'The snapshot was not found.' },
  POSITION_OUT_OF_RANGE: { code: 99, retriable: false, message: 'The position is outside the snapshot.' },
  UNKNOWN_TOPIC_ID: { code: 100, retriable: true, message: 'This server does not host the topic id.' },
  DUPLICATE_BROKER_REGISTRATION: { code: 101, retriable: false, message: 'The broker id is already registered.' },
  BROKER_ID_NOT_REGISTERED: { code: 102, retriable: false, message: 'The broker id is not registered.' },
  INCONSISTENT_TOPIC_ID: { code: 103, retriable: true, message: "The log's topic id does not match the request." },
  INCONSISTENT_CLUSTER_ID: { code: 104, retriable: false, message: 'The cluster id does not match the server.' },
  TRANSACTIONAL_ID_NOT_FOUND: { code: 105, retriable: false, message: 'The transactional id was not found.' },
  FETCH_SESSION_TOPIC_ID_ERROR: { code: 106, retriable: true, message: 'The fetch session used topic ids inconsistently.' },
  INELIGIBLE_REPLICA: { code: 107, retriable: false, message: 'The new ISR contains an ineligible replica.' },
  NEW_LEADER_ELECTED: { code: 108, retriable: false, message: 'The partition state was updated but the leader changed.' },
  OFFSET_MOVED_TO_TIERED_STORAGE: { code: 109, retriable: false, message: 'The requested offset has moved to tiered storage.' },
  FENCED_MEMBER_EPOCH: { code: 110, retriable: false, message: 'The member epoch is fenced; the member must rejoin.' },
  UNRELEASED_INSTANCE_ID: { code: 111, retriable: false, message: 'The instance id is still held by another member.' },
  UNSUPPORTED_ASSIGNOR: { code: 112, retriable: false, message: 'The assignor is not supported by the group.' },
  STALE_MEMBER_EPOCH: { code: 113, retriable: false, message: 'The member epoch is stale.' },
  MISMATCHED_ENDPOINT_TYPE: { code: 114, retriable: false, message: 'The request reached an endpoint of the wrong type.' },
  UNSUPPORTED_ENDPOINT_TYPE: { code: 115, retriable: false, message: 'The endpoint type is not supported.' },
  UNKNOWN_CONTROLLER_ID: { code: 116, retriable: false, message: 'The controller id is unknown.' },
  UNKNOWN_SUBSCRIPTION_ID: { code: 117, retriable: false, message: 'The telemetry subscription id is unknown or outdated.' },
  TELEMETRY_TOO_LARGE: { code: 118, retriable: false, message: 'The telemetry payload is larger than the broker accepts.' },
  INVALID_REGISTRATION: { code: 119, retriable: false, message: 'The controller considers the broker registration invalid.' },
  TRANSACTION_ABORTABLE: { code: 120, retriable: false, message: 'The transaction hit an error; abort it to continue.' },
} as const satisfies Record<string, ErrorSpec>;

export type KafkaErrorName = keyof typeof KAFKA_ERRORS;
export type KafkaErrorCode = (typeof KAFKA_ERRORS)[KafkaErrorName]['code'];

export interface KafkaErrorInfo {
  readonly name: KafkaErrorName;
  readonly code: number;
  readonly retriable: boolean;
  readonly message: string;
}

/** Name → numeric code, e.g. `ErrorCode.CORRUPT_MESSAGE === 2`. */
export const ErrorCode: { readonly [K in KafkaErrorName]: (typeof KAFKA_ERRORS)[K]['code'] } = Object.freeze(
  Object.fromEntries(Object.entries(KAFKA_ERRORS).map(([name, spec]) => [name, spec.code])),
) as { readonly [K in KafkaErrorName]: (typeof KAFKA_ERRORS)[K]['code'] };

const BY_CODE: ReadonlyMap<number, KafkaErrorInfo> = new Map(
  (Object.entries(KAFKA_ERRORS) as [KafkaErrorName, ErrorSpec][]).map(([name, spec]) => [
    spec.code,
    Object.freeze({ name, code: spec.code, retriable: spec.retriable, message: spec.message }),
  ]),
);

/** The table entry for a wire error code, or undefined for codes this table does not know. */
export function errorByCode(code: number): KafkaErrorInfo | undefined {
  return BY_CODE.get(code);
}

/** The error name for a code, or `UNKNOWN(<code>)` for codes outside the table. */
export function errorName(code: number): string {
  return BY_CODE.get(code)?.name ?? `UNKNOWN(${code})`;
}

export function isRetriable(code: number): boolean {
  return BY_CODE.get(code)?.retriable ?? false;
}

/**
 * An error that maps to a Kafka protocol error code. Throw it anywhere a request can fail with a
 * specific code; `errorCodeOf()` turns it back into the code for the response.
 */
export class KafkaError extends Error {
  readonly code: number;

  constructor(code: number | KafkaErrorName, message?: string, options?: { cause?: unknown }) {
    const numeric = typeof code === 'number' ? code : KAFKA_ERRORS[code].code;
    super(message ?? BY_CODE.get(numeric)?.message ?? `Kafka error ${numeric}`, options);
    this.code = numeric;
    this.name = 'KafkaError';
  }

  /** The Kafka error name (e.g. `CORRUPT_MESSAGE`), or `UNKNOWN(<code>)`. */
  get errorName(): string {
    return errorName(this.code);
  }

  get retriable(): boolean {
    return isRetriable(this.code);
  }
}

/**
 * The one place an exception becomes a wire error code: a `KafkaError` yields its own code,
 * anything else is `UNKNOWN_SERVER_ERROR` (-1).
 */
export function errorCodeOf(e: unknown): number {
  return e instanceof KafkaError ? e.code : KAFKA_ERRORS.UNKNOWN_SERVER_ERROR.code;
}

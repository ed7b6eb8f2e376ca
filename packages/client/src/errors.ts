import { KafkaError } from '@samsa/protocol';

/**
 * Client-side failures, as KafkaErrors with the code the Java client would report, so callers can
 * branch on `errorName` / `retriable` whatever went wrong:
 *
 * - ConnectionError       NETWORK_EXCEPTION   connect failure, connection lost or closed (retriable)
 * - RequestTimeoutError   REQUEST_TIMED_OUT   one request got no answer in time (retriable)
 * - UnsupportedApiError   UNSUPPORTED_VERSION the broker does not advertise the API / no common version
 * - OperationTimeoutError REQUEST_TIMED_OUT   an admin operation ran out of time while retrying
 *
 * Errors the broker returns in a response are plain KafkaErrors carrying the broker's code and
 * message. BatchError collects per-item errors of a batch operation (createTopics & co).
 */

/** A connection could not be established, was lost, or was closed while requests were pending. */
export class ConnectionError extends KafkaError {
  /** `host:port` of the broker. */
  readonly broker: string;

  constructor(broker: string, message: string, options?: { cause?: unknown }) {
    super('NETWORK_EXCEPTION', message, options);
    this.name = 'ConnectionError';
    this.broker = broker;
  }
}

/** A request got no response within its timeout (the connection is closed, as the Java client does). */
export class RequestTimeoutError extends KafkaError {
  readonly broker: string;
  readonly timeoutMs: number;

  constructor(broker: string, timeoutMs: number, message: string, options?: { cause?: unknown }) {
    super('REQUEST_TIMED_OUT', message, options);
    this.name = 'RequestTimeoutError';
    this.broker = broker;
    this.timeoutMs = timeoutMs;
  }
}

/** The broker does not advertise an API in ApiVersions, or no version is usable by both sides. */
export class UnsupportedApiError extends KafkaError {
  readonly apiKey: number;
  readonly apiName: string;

  constructor(apiKey: number, apiName: string, message: string, options?: { cause?: unknown }) {
    super('UNSUPPORTED_VERSION', message, options);
    this.name = 'UnsupportedApiError';
    this.apiKey = apiKey;
    this.apiName = apiName;
  }
}

/** An operation (with its retries) did not complete before its deadline. `cause` is the last error. */
export class OperationTimeoutError extends KafkaError {
  readonly operation: string;
  readonly attempts: number;

  constructor(operation: string, timeoutMs: number, attempts: number, lastError: unknown) {
    const last = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
    super('REQUEST_TIMED_OUT', `${operation} timed out after ${timeoutMs} ms (${attempts} attempt${attempts === 1 ? '' : 's'})${last}`, {
      cause: lastError,
    });
    this.name = 'OperationTimeoutError';
    this.operation = operation;
    this.attempts = attempts;
  }
}

/**
 * Some items of a batch operation failed (per-topic errors of CreateTopics, DeleteTopics, ...).
 * `errors` maps each failed item (a topic name) to its KafkaError; `succeeded` lists the others.
 * With a single failure the message is that error's message and `cause` is that error.
 */
export class BatchError extends Error {
  readonly errors: ReadonlyMap<string, KafkaError>;
  readonly succeeded: readonly string[];

  constructor(operation: string, errors: ReadonlyMap<string, KafkaError>, succeeded: readonly string[]) {
    const entries = [...errors];
    const first = entries[0];
    const message =
      entries.length === 1 && first
        ? first[1].message
        : `${operation} failed for ${entries.length} item${entries.length === 1 ? '' : 's'}: ` +
          entries.map(([k, e]) => `${k}: ${e.errorName} (${e.message})`).join('; ');
    super(message, first ? { cause: first[1] } : undefined);
    this.name = 'BatchError';
    this.errors = errors;
    this.succeeded = succeeded;
  }

  /** The error of one item, if it failed. */
  errorFor(item: string): KafkaError | undefined {
    return this.errors.get(item);
  }
}

/** A KafkaError for a response error code, with the broker's message when it sent one. */
export function brokerError(code: number, message?: string | null): KafkaError {
  return new KafkaError(code, message ?? undefined);
}

/** Whether an admin operation should be retried after this error. */
export function isRetriableError(err: unknown): boolean {
  return err instanceof KafkaError && !(err instanceof OperationTimeoutError) && err.retriable;
}

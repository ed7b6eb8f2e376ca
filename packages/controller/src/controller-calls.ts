/**
 * Callers waiting on the controller's event loop (ElectLeaders, AlterPartitionReassignments,
 * ListPartitionReassignments, ControlledShutdown) are always answered: by the event's processing,
 * with NOT_CONTROLLER when the event is dropped or the controller moved (events.ts, Kafka's
 * ControllerEvent.preempt), with UNKNOWN_SERVER_ERROR when its processing fails, and with
 * REQUEST_TIMED_OUT when no answer came within the caller's timeout (the request's timeoutMs where
 * the API has one, else request.timeout.ms). A timed-out event stays queued and still runs, as a
 * Kafka election whose DelayedElectLeader expired still happens.
 */
import { ErrorCode, TopicPartitionMap, type TopicPartition } from '@samsa/protocol';
import { ControllerMovedError } from '@samsa/zk-paths';
import type { ControllerEvent } from './events.js';
import type { ElectionOutcome } from './leader-balance.js';
import type { OngoingReassignment, ReassignmentOutcome } from './reassignment.js';

/** request.timeout.ms default: the wait of callers whose API has no timeout of its own. */
export const DEFAULT_CONTROLLER_CALL_TIMEOUT_MS = 30_000;

const TIMED_OUT_MESSAGE = 'The controller did not answer within the request timeout.';

export interface ElectLeadersAnswer {
  errorCode: number;
  results: TopicPartitionMap<ElectionOutcome>;
}
export interface AlterReassignmentsAnswer {
  errorCode: number;
  results: Map<string, ReassignmentOutcome>;
}
export interface ListReassignmentsAnswer {
  errorCode: number;
  reassignments: OngoingReassignment[];
}
export interface ControlledShutdownAnswer {
  errorCode: number;
  remaining: TopicPartition[];
}

/** The error code answering the caller of an event whose processing threw. */
export function callErrorCode(err: unknown): number {
  return err instanceof ControllerMovedError ? ErrorCode.NOT_CONTROLLER : ErrorCode.UNKNOWN_SERVER_ERROR;
}

/** A request's timeout when it has a usable one (> 0), else the fallback (request.timeout.ms). */
export function callTimeoutMs(requested: number | undefined, fallbackMs: number): number {
  return requested !== undefined && requested > 0 ? requested : fallbackMs;
}

/**
 * Queues a caller's event (built by `event` around the answer callback) and resolves with the first
 * of its answer and `timedOut()` after `timeoutMs`.
 */
export function callController<T>(
  put: (e: ControllerEvent) => void,
  timeoutMs: number,
  timedOut: () => T,
  event: (answer: (v: T) => void) => ControllerEvent,
): Promise<T> {
  return new Promise<T>((resolve) => {
    let done = false;
    const timer = setTimeout(() => answer(timedOut()), timeoutMs);
    const answer = (v: T): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(v);
    };
    put(event(answer));
  });
}

/** Where callers' events go, and request.timeout.ms for APIs without a timeout of their own. */
export interface ControllerCaller {
  put(e: ControllerEvent): void;
  fallbackTimeoutMs: number;
}

/** ElectLeaders: per-partition outcomes; on timeout each named partition REQUEST_TIMED_OUT (Kafka's DelayedElectLeader expiry), or the whole request when none were named. */
export function electLeadersCall(
  c: ControllerCaller,
  partitions: TopicPartition[] | null,
  electionType: 0 | 1,
  timeoutMs?: number,
): Promise<ElectLeadersAnswer> {
  const timedOut = (): ElectLeadersAnswer => {
    const results = new TopicPartitionMap<ElectionOutcome>();
    if (partitions === null) return { errorCode: ErrorCode.REQUEST_TIMED_OUT, results };
    for (const tp of partitions) results.set(tp.topic, tp.partition, { errorCode: ErrorCode.REQUEST_TIMED_OUT, message: TIMED_OUT_MESSAGE });
    return { errorCode: ErrorCode.NONE, results };
  };
  return callController<ElectLeadersAnswer>(
    (e) => c.put(e),
    callTimeoutMs(timeoutMs, c.fallbackTimeoutMs),
    timedOut,
    (answer) => ({ type: 'ReplicaLeaderElection', partitions, electionType, callback: (results, errorCode) => answer({ errorCode, results }) }),
  );
}

/** AlterPartitionReassignments (null replicas cancel): per-partition outcomes, or REQUEST_TIMED_OUT. */
export function alterReassignmentsCall(
  c: ControllerCaller,
  reassignments: Array<{ topic: string; partition: number; replicas: number[] | null }>,
  timeoutMs?: number,
): Promise<AlterReassignmentsAnswer> {
  return callController<AlterReassignmentsAnswer>(
    (e) => c.put(e),
    callTimeoutMs(timeoutMs, c.fallbackTimeoutMs),
    () => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, results: new Map() }),
    (answer) => ({ type: 'ApiPartitionReassignment', reassignments, callback: (results, errorCode) => answer({ errorCode, results }) }),
  );
}

/** ListPartitionReassignments: ongoing reassignments (of `partitions`, or all), or REQUEST_TIMED_OUT. */
export function listReassignmentsCall(c: ControllerCaller, partitions: TopicPartition[] | null, timeoutMs?: number): Promise<ListReassignmentsAnswer> {
  return callController<ListReassignmentsAnswer>(
    (e) => c.put(e),
    callTimeoutMs(timeoutMs, c.fallbackTimeoutMs),
    () => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, reassignments: [] }),
    (answer) => ({ type: 'ListPartitionReassignments', partitions, callback: (reassignments, errorCode) => answer({ errorCode, reassignments }) }),
  );
}

/** ControlledShutdown (no timeout in the request: request.timeout.ms): partitions the broker still leads, or REQUEST_TIMED_OUT. */
export function controlledShutdownCall(c: ControllerCaller, brokerId: number, brokerEpoch: bigint, timeoutMs?: number): Promise<ControlledShutdownAnswer> {
  return callController<ControlledShutdownAnswer>(
    (e) => c.put(e),
    callTimeoutMs(timeoutMs, c.fallbackTimeoutMs),
    () => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, remaining: [] }),
    (answer) => ({ type: 'ControlledShutdown', brokerId, brokerEpoch, callback: (errorCode, remaining) => answer({ errorCode, remaining }) }),
  );
}

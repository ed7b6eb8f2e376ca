import { ErrorCode, TopicPartitionMap, type TopicPartition } from '@samsa/protocol';
/** Everything the controller reacts to. Watches and RPC callbacks only enqueue one of these. */
export type ControllerEvent =
  | { type: 'Startup' }
  | { type: 'ControllerChange' }
  | { type: 'Reelect' }
  | { type: 'Expire' }
  | { type: 'RegisterBrokerAndReelect' }
  | { type: 'BrokerChange' }
  | { type: 'TopicChange' }
  | { type: 'PartitionModifications'; topic: string }
  | { type: 'TopicDeletion' }
  | { type: 'IsrChangeNotification' }
  | { type: 'PreferredReplicaLeaderElection' }
  | { type: 'AutoPreferredReplicaLeaderElection' }
  | {
      type: 'ReplicaLeaderElection';
      partitions: TopicPartition[] | null;
      electionType: 0 | 1;
      callback: (results: TopicPartitionMap<{ errorCode: number; message: string | null }>, errorCode: number) => void;
    }
  | {
      type: 'ControlledShutdown';
      brokerId: number;
      brokerEpoch: bigint;
      callback: (errorCode: number, remaining: Array<{ topic: string; partition: number }>) => void;
    }
  | { type: 'ZkPartitionReassignment' }
  | { type: 'PartitionReassignmentIsrChange'; tp: { topic: string; partition: number } }
  | {
      type: 'ApiPartitionReassignment';
      /** Target replicas per partition; null cancels the partition's reassignment (KIP-455). */
      reassignments: Array<{ topic: string; partition: number; replicas: number[] | null }>;
      callback: (results: Map<string, { errorCode: number; message: string | null }>, errorCode: number) => void;
    }
  | {
      type: 'ListPartitionReassignments';
      partitions: Array<{ topic: string; partition: number }> | null;
      callback: (
        results: Array<{ topic: string; partition: number; replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }>,
        errorCode: number,
      ) => void;
    }
  | { type: 'TopicDeletionStopReplicaResponseReceived'; brokerId: number; partitionErrors: Array<{ topic: string; partition: number; errorCode: number }> }
  | { type: 'ShutdownEventThread' };

export type ControllerEventType = ControllerEvent['type'];

/** The events a caller waits on (each carries the callback that answers it). */
export type ControllerCallEvent = Extract<ControllerEvent, { callback: unknown }>;

export function isCallEvent(e: ControllerEvent): e is ControllerCallEvent {
  return 'callback' in e;
}

/**
 * Kafka's ControllerEvent.preempt: answers the caller of an event that will not be processed (or
 * whose processing failed) with `errorCode` and no results. Events without a caller: nothing to do.
 */
export function preempt(e: ControllerEvent, errorCode: number): void {
  switch (e.type) {
    case 'ReplicaLeaderElection':
      e.callback(new TopicPartitionMap(), errorCode);
      return;
    case 'ControlledShutdown':
      e.callback(errorCode, []);
      return;
    case 'ApiPartitionReassignment':
      e.callback(new Map(), errorCode);
      return;
    case 'ListPartitionReassignments':
      e.callback([], errorCode);
      return;
    default:
      return;
  }
}

/** The event with a callback that answers only the first time (a preempted or timed-out caller is not answered twice). */
function answeredOnce(e: ControllerEvent): ControllerEvent {
  if (!isCallEvent(e)) return e;
  let answered = false;
  const cb = e.callback as (...args: unknown[]) => void;
  const callback = (...args: unknown[]): void => {
    if (answered) return;
    answered = true;
    cb(...args);
  };
  return { ...e, callback } as ControllerEvent;
}

/**
 * A single-consumer queue: one loop awaits each event fully before taking the next, so the
 * controller's state is never touched by two events at once (async code would otherwise interleave
 * at every await).
 *
 * Every event with a caller is answered exactly once: by its processing; with NOT_CONTROLLER when
 * it is dropped (put after close, queued at close, queued at clearAndPut); with `errorCodeOf(err)`
 * (default UNKNOWN_SERVER_ERROR) when its processing throws before answering.
 */
export class ControllerEventManager {
  private readonly queue: ControllerEvent[] = [];
  private wake: (() => void) | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  /** The event being processed, for diagnostics and metrics. */
  current: ControllerEvent | undefined;

  constructor(
    private readonly process: (e: ControllerEvent) => Promise<void>,
    private readonly onError: (e: ControllerEvent, err: unknown) => void,
    /** Told how long each event took (Kafka's per-event ControllerStats timers). */
    private readonly onProcessed?: (type: ControllerEventType, ms: number) => void,
    /** The error code answering the caller of an event whose processing threw. */
    private readonly errorCodeOf: (err: unknown) => number = () => ErrorCode.UNKNOWN_SERVER_ERROR,
  ) {}

  get size(): number {
    return this.queue.length;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Queues `e`; a caller's event put while the loop is not running is answered NOT_CONTROLLER. */
  put(e: ControllerEvent): void {
    const event = answeredOnce(e);
    if (!this.running) {
      preempt(event, ErrorCode.NOT_CONTROLLER);
      return;
    }
    this.queue.push(event);
    this.wake?.();
  }

  /** Kafka's clearAndPut: drops the queued events (their callers answered NOT_CONTROLLER), then queues `e`. */
  clearAndPut(e: ControllerEvent): void {
    this.preemptQueued();
    this.put(e);
  }

  /** Stops after the event in progress; queued events are dropped (their callers answered NOT_CONTROLLER). */
  async close(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.preemptQueued();
    this.queue.push({ type: 'ShutdownEventThread' });
    this.wake?.();
    await this.loop;
  }

  private preemptQueued(): void {
    for (const e of this.queue.splice(0)) preempt(e, ErrorCode.NOT_CONTROLLER);
  }

  private async run(): Promise<void> {
    for (;;) {
      const e = this.queue.shift();
      if (!e) {
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      if (e.type === 'ShutdownEventThread') return;
      this.current = e;
      const started = performance.now();
      try {
        await this.process(e);
      } catch (err) {
        this.onError(e, err);
        preempt(e, this.errorCodeOf(err));
      } finally {
        this.current = undefined;
        this.onProcessed?.(e.type, performance.now() - started);
      }
    }
  }
}

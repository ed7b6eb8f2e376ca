import type { TopicPartition, TopicPartitionMap } from '@samsa/protocol';
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

/**
 * A single-consumer queue: one loop awaits each event fully before taking the next, so the
 * controller's state is never touched by two events at once (async code would otherwise interleave
 * at every await).
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
  ) {}

  get size(): number {
    return this.queue.length;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  put(e: ControllerEvent): void {
    if (!this.running) return;
    this.queue.push(e);
    this.wake?.();
  }

  /** Drops queued events of a type (e.g. pending re-elections superseded by a newer one). */
  clear(): void {
    this.queue.length = 0;
  }

  /** Stops after the event in progress; queued events are dropped. */
  async close(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.queue.length = 0;
    this.queue.push({ type: 'ShutdownEventThread' });
    this.wake?.();
    await this.loop;
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
      } finally {
        this.current = undefined;
        this.onProcessed?.(e.type, performance.now() - started);
      }
    }
  }
}

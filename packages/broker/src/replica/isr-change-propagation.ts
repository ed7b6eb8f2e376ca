import { topicPartitionKey } from '@samsa/protocol';
import type { Logger } from 'pino';
import { CreateMode, IsrChangeNotificationSequenceZNode, type KafkaZk } from '@samsa/zk-paths';

/** Kafka's ISR-change propagation rule: write when the last change is 5 s old, or 60 s passed. */
const ISR_CHANGE_QUIET_MS = 5000;
const ISR_CHANGE_MAX_DELAY_MS = 60_000;
export const ISR_PROPAGATION_INTERVAL_MS = 2500;

/**
 * The partitions whose ISR this broker changed as leader, written in batches as one
 * /isr_change_notification/isr_change_<seq> znode (Kafka's ReplicaManager.maybePropagateIsrChanges):
 * the controller reads it and sends UpdateMetadata for them.
 */
export class IsrChangePropagation {
  private readonly changed = new Map<string, { topic: string; partition: number }>();
  private lastChangeMs = 0;
  private lastPropagationMs = Date.now();

  constructor(
    private readonly kzk: KafkaZk,
    private readonly log: Logger,
  ) {}

  record(topic: string, partition: number): void {
    this.changed.set(topicPartitionKey(topic, partition), { topic, partition });
    this.lastChangeMs = Date.now();
  }

  async maybePropagate(now = Date.now()): Promise<void> {
    if (this.changed.size === 0) return;
    if (this.lastChangeMs + ISR_CHANGE_QUIET_MS > now && this.lastPropagationMs + ISR_CHANGE_MAX_DELAY_MS > now) return;
    const parts = [...this.changed.values()];
    this.changed.clear();
    try {
      await this.kzk.zk.create(IsrChangeNotificationSequenceZNode.createPath, IsrChangeNotificationSequenceZNode.encode(parts), {
        mode: CreateMode.PersistentSequential,
        mkdirp: true,
      });
      this.lastPropagationMs = now;
    } catch (err) {
      for (const tp of parts) this.changed.set(topicPartitionKey(tp), tp);
      this.log.warn({ err }, 'could not write the ISR change notification; will retry');
    }
  }
}

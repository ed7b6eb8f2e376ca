/**
 * Leader elections seen during `samsa chaos`: polls ZooKeeper's partition state znodes
 * (`/brokers/topics/<t>/partitions/<p>/state`: leader, leader_epoch) and `/controller_epoch`, and
 * counts every change of a partition's leader epoch (an election, possibly of the same broker) and
 * of the controller epoch. Changes between two polls (500 ms) count once.
 */
import { topicPartitionKey } from '@samsa/protocol';
import { KafkaZk, ZkClient } from '@samsa/zk-paths';

export interface ElectionEvent {
  at: number;
  kind: 'leader' | 'controller';
  /** `topic-partition` for leader elections. */
  partition?: string;
  from: number;
  to: number;
  epoch: number;
}

export class ElectionObserver {
  readonly events: ElectionEvent[] = [];
  private readonly leaders = new Map<number, { leader: number; epoch: number }>();
  private controller: { id: number; epoch: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private zk: KafkaZk | undefined;
  private failures = 0;

  constructor(
    private readonly connect: string,
    private readonly topic: string,
    private readonly partitions: number,
  ) {}

  async start(everyMs = 500): Promise<void> {
    this.zk = new KafkaZk(await ZkClient.connect({ connectString: this.connect, sessionTimeoutMs: 30_000 }));
    await this.poll();
    this.timer = setInterval(() => {
      this.polling ??= this.poll().finally(() => (this.polling = undefined));
    }, everyMs);
  }

  /** Polls that failed (ZooKeeper unreachable, e.g. while a quorum was down). */
  get failedPolls(): number {
    return this.failures;
  }

  private async poll(): Promise<void> {
    const zk = this.zk!;
    try {
      const now = Date.now();
      const epoch = await zk.getControllerEpoch();
      const id = await zk.getControllerId();
      if (epoch && id !== null) {
        if (this.controller && epoch.epoch !== this.controller.epoch)
          this.events.push({ at: now, kind: 'controller', from: this.controller.id, to: id, epoch: epoch.epoch });
        this.controller = { id, epoch: epoch.epoch };
      }
      // one pipelined read of every state znode (a topic of thousands of partitions is one round trip's wait, not thousands)
      const states = await zk.getPartitionStates(Array.from({ length: this.partitions }, (_, partition) => ({ topic: this.topic, partition })));
      for (let p = 0; p < this.partitions; p++) {
        const st = states.get(topicPartitionKey(this.topic, p));
        if (!st) continue;
        const prev = this.leaders.get(p);
        if (prev && st.state.leaderEpoch !== prev.epoch) {
          this.events.push({
            at: now,
            kind: 'leader',
            partition: topicPartitionKey(this.topic, p),
            from: prev.leader,
            to: st.state.leader,
            epoch: st.state.leaderEpoch,
          });
        }
        this.leaders.set(p, { leader: st.state.leader, epoch: st.state.leaderEpoch });
      }
    } catch {
      this.failures++;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
    await this.poll();
    await this.zk?.zk.close();
  }
}

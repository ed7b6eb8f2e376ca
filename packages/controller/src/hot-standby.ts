import { topicPartitionKey, type PartitionState as ControlPartitionState, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import {
  TopicPartitionStateZNode,
  TopicZNode,
  TopicsZNode,
  ZkCode,
  ZkSessionEvent,
  isZkError,
  type KafkaZk,
  type TopicAssignment,
  type Unwatch,
} from '@samsa/zk-paths';
import { forEachBounded } from '@samsa/server-common';
import type { LeadershipInfo } from './context.js';

export interface HotStandbyOptions {
  kzk: KafkaZk;
  log: Logger;
  /** Partition-state znodes watched at most (controller.hot.standby.max.partitions); the rest are read at failover. */
  maxPartitions: number;
  /** Quiet time after the last watch event before dirty entries are checked again (a burst of writes is checked once, after it). */
  recheckDelayMs?: number;
  /** Longest a dirty entry waits for quiet (a cluster that never quiets down is still checked). */
  maxRecheckDelayMs?: number;
  /** ZooKeeper reads in flight at most while warming or re-checking (a background trickle, not a burst). */
  readsInFlight?: number;
}

/** What a standby holds that is known to match ZooKeeper: clean topics and partition states (null: no state znode). */
export interface WarmView {
  topics: Map<string, TopicAssignment>;
  partitions: Map<string, LeadershipInfo | null>;
  /** Whether the entry of partition `key` is still the one in this view, clean (no watch event since): read after the failover's reads. */
  stillClean?: (key: string) => boolean;
}

interface WarmTopic {
  assignment: TopicAssignment | null;
  clean: boolean;
  reading: boolean;
  /** Bumped by every watch event: a read issued before the bump is not trusted. */
  gen: number;
}

interface WarmPartition {
  tp: TopicPartition;
  /** The state as of the armed watch (null: the znode does not exist). */
  info: LeadershipInfo | null;
  /** The newest state an UpdateMetadata named: checked with a cheap exists instead of a read. */
  hint: LeadershipInfo | undefined;
  clean: boolean;
  gen: number;
}

/**
 * A hot-standby controller's context (beyond Kafka's ZooKeeper mode, where a new controller reads
 * every partition state znode at failover). Every broker that is not the controller keeps the
 * topics' assignments and the partitions' leader/ISR with their zkVersions, each backed by a
 * one-shot ZooKeeper watch: an entry is clean while its watch is armed and has not fired, so it
 * matches ZooKeeper (ZooKeeper delivers a watch event before any later answer on the session; the
 * new controller's own registration is such an answer). A fired watch makes the entry dirty; once
 * no watch fired for `recheckDelayMs` (a burst of elections is checked after it, not during it;
 * at most `maxRecheckDelayMs` late) it is checked again, a few reads in flight: with an exists against the zkVersion the UpdateMetadata
 * stream named (the usual case: the controller wrote it and told everyone), or with a read. A lost
 * session dirties everything. At failover `view()` hands over the clean entries; the controller
 * reads the rest and verifies a sample (controller.ts).
 */
export class HotStandby {
  private running = false;
  private readonly topics = new Map<string, WarmTopic>();
  private readonly partitions = new Map<string, WarmPartition>();
  private readonly dirty = new Set<string>();
  private topicsWatch: Unwatch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  /** When the first entry still dirty became dirty, and when the last one did (the quiet period counts from it). */
  private firstDirtyAt = 0;
  private lastDirtyAt = 0;
  private capLogged = false;
  private readonly log: Logger;
  private readonly onSession = (e: ZkSessionEvent) => {
    if (e === ZkSessionEvent.Expired) this.invalidate();
    else if (e === ZkSessionEvent.NewSession) {
      for (const t of this.topics.keys()) this.readTopic(t);
      this.schedule();
    }
  };

  constructor(private readonly o: HotStandbyOptions) {
    this.log = o.log.child({ component: 'hot-standby' });
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Starts keeping the context warm (idempotent): watches /brokers/topics, then reads in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.o.kzk.zk.on('state', this.onSession);
    this.topicsWatch = this.o.kzk.zk.watchChildren(TopicsZNode.path, (children) => this.onTopics(children ?? []));
    this.log.info({ maxPartitions: this.o.maxPartitions }, 'hot standby started: keeping the controller context warm');
  }

  /** Stops and forgets everything (the broker became the controller, or shuts down). Pending watches fire into nothing. */
  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.o.kzk.zk.off('state', this.onSession);
    this.topicsWatch?.();
    this.topicsWatch = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.topics.clear();
    this.partitions.clear();
    this.dirty.clear();
    this.capLogged = false;
    this.firstDirtyAt = this.lastDirtyAt = 0;
  }

  /** Counts for logs and tests. */
  stats(): { topics: number; partitions: number; clean: number; dirty: number } {
    let clean = 0;
    for (const e of this.partitions.values()) if (e.clean) clean++;
    return { topics: this.topics.size, partitions: this.partitions.size, clean, dirty: this.dirty.size };
  }

  /** The clean part of the context, as a new controller adopts it. */
  view(): WarmView {
    const topics = new Map<string, TopicAssignment>();
    for (const [t, w] of this.topics) if (w.clean && w.assignment) topics.set(t, w.assignment);
    const partitions = new Map<string, LeadershipInfo | null>();
    for (const [k, e] of this.partitions) if (e.clean && topics.has(e.tp.topic)) partitions.set(k, e.info);
    const stillClean = (k: string): boolean => {
      const e = this.partitions.get(k);
      return this.running && e !== undefined && e.clean && e.info === partitions.get(k);
    };
    return { topics, partitions, stillClean };
  }

  /**
   * The partition states of an UpdateMetadata this broker applied: hints of what ZooKeeper now holds.
   * Never trusted alone; they let the re-check use an exists (zkVersion) instead of a read.
   */
  observeUpdateMetadata(states: readonly ControlPartitionState[]): void {
    if (!this.running) return;
    for (const s of states) {
      const e = this.partitions.get(topicPartitionKey(s));
      if (!e) continue;
      if ((e.clean && e.info && e.info.zkVersion >= s.zkVersion) || (e.hint && e.hint.zkVersion >= s.zkVersion)) continue;
      e.hint = {
        state: {
          leader: s.leader,
          leaderEpoch: s.leaderEpoch,
          isr: s.isr,
          controllerEpoch: s.controllerEpoch,
          ...(s.leaderRecoveryState ? { leaderRecoveryState: s.leaderRecoveryState } : {}),
        },
        zkVersion: s.zkVersion,
      };
    }
  }

  // ---- topics ------------------------------------------------------------------------------

  private onTopics(children: string[]): void {
    if (!this.running) return;
    const now = new Set(children);
    for (const t of [...this.topics.keys()]) if (!now.has(t)) this.dropTopic(t);
    for (const t of children) {
      const w = this.topics.get(t);
      if (!w) {
        this.topics.set(t, { assignment: null, clean: false, reading: false, gen: 0 });
        this.readTopic(t);
      } else if (!w.clean) this.readTopic(t);
    }
  }

  private dropTopic(topic: string): void {
    const w = this.topics.get(topic);
    this.topics.delete(topic);
    if (!w?.assignment) return;
    for (const p of w.assignment.partitions.keys()) {
      const k = topicPartitionKey({ topic, partition: p });
      this.partitions.delete(k);
      this.dirty.delete(k);
    }
  }

  private readTopic(topic: string): void {
    const w = this.topics.get(topic);
    if (!w || w.reading || !this.running) return;
    w.reading = true;
    const gen = w.gen;
    const fired = () => {
      if (this.topics.get(topic) !== w) return;
      w.gen++;
      w.clean = false;
      this.readTopic(topic);
    };
    this.o.kzk.zk
      .getWithWatch(TopicZNode.path(topic), fired)
      .then((n) => {
        w.reading = false;
        if (this.topics.get(topic) !== w || !this.running) return;
        if (w.gen !== gen) return this.readTopic(topic);
        const assignment = n ? TopicZNode.decode(topic, n.data) : null;
        this.applyAssignment(topic, w.assignment, assignment);
        w.assignment = assignment;
        w.clean = true;
      })
      .catch((err: unknown) => {
        w.reading = false;
        if (!this.running || this.topics.get(topic) !== w) return;
        w.clean = false;
        // a lost session re-reads every topic on the new one; anything else retries shortly
        if (isZkError(err, ZkCode.SESSION_LOST)) return;
        this.log.warn({ err, topic }, 'hot standby: topic read failed; retrying');
        setTimeout(() => this.readTopic(topic), 500).unref();
      });
  }

  /** New partitions of a topic get (dirty) entries, up to the cap; removed ones go. */
  private applyAssignment(topic: string, before: TopicAssignment | null, after: TopicAssignment | null): void {
    if (before) {
      for (const p of before.partitions.keys()) {
        if (after?.partitions.has(p)) continue;
        const k = topicPartitionKey({ topic, partition: p });
        this.partitions.delete(k);
        this.dirty.delete(k);
      }
    }
    if (!after) return;
    for (const p of after.partitions.keys()) {
      const tp = { topic, partition: p };
      const k = topicPartitionKey(tp);
      if (this.partitions.has(k)) continue;
      if (this.partitions.size >= this.o.maxPartitions) {
        if (!this.capLogged) {
          this.capLogged = true;
          this.log.info({ maxPartitions: this.o.maxPartitions }, 'hot standby: partition cap reached; the others are read at failover');
        }
        break;
      }
      this.partitions.set(k, { tp, info: null, hint: undefined, clean: false, gen: 0 });
      this.dirty.add(k);
    }
    this.dirtied();
  }

  // ---- partition states --------------------------------------------------------------------

  /** An entry became dirty: the re-check waits for a quiet period. */
  private dirtied(): void {
    const now = Date.now();
    if (this.firstDirtyAt === 0) this.firstDirtyAt = now;
    this.lastDirtyAt = now;
    this.schedule();
  }

  private schedule(): void {
    if (!this.running || this.timer || this.sweeping || this.dirty.size === 0) return;
    const quiet = this.o.recheckDelayMs ?? 1000;
    const now = Date.now();
    const due = Math.min(this.lastDirtyAt + quiet, this.firstDirtyAt + (this.o.maxRecheckDelayMs ?? 10_000));
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (Date.now() < Math.min(this.lastDirtyAt + quiet, this.firstDirtyAt + (this.o.maxRecheckDelayMs ?? 10_000))) this.schedule();
        else void this.sweep();
      },
      Math.max(0, due - now),
    );
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    if (!this.running || this.sweeping) return;
    this.sweeping = true;
    this.firstDirtyAt = 0;
    const keys = [...this.dirty];
    let failed = false;
    await forEachBounded(keys, this.o.readsInFlight ?? 4, async (k) => {
      if (failed) return;
      try {
        await this.recheck(k);
      } catch (err) {
        failed = true;
        if (!isZkError(err, ZkCode.SESSION_LOST)) this.log.warn({ err }, 'hot standby: partition state check failed; retrying later');
      }
    });
    this.sweeping = false;
    this.schedule();
  }

  private async recheck(k: string): Promise<void> {
    const e = this.partitions.get(k);
    if (!e || e.clean || !this.running) return;
    const gen = e.gen;
    const path = TopicPartitionStateZNode.path(e.tp.topic, e.tp.partition);
    const fired = () => {
      if (this.partitions.get(k) !== e) return;
      e.gen++;
      e.clean = false;
      this.dirty.add(k);
      this.dirtied();
    };
    const stillOurs = () => this.running && this.partitions.get(k) === e && e.gen === gen;
    const hint = e.hint;
    if (hint) {
      const stat = await this.o.kzk.zk.existsWithWatch(path, fired);
      if (!stillOurs()) return;
      if (!stat || stat.version === hint.zkVersion) return this.markClean(k, e, stat ? hint : null);
    }
    const n = await this.o.kzk.zk.getWithWatch(path, fired);
    if (!stillOurs()) return;
    let info: LeadershipInfo | null = null;
    if (n) {
      try {
        info = { state: TopicPartitionStateZNode.decode(n.data, path), zkVersion: n.stat.version };
      } catch (err) {
        // left dirty out of the sweep: the controller reads it at failover and handles it as always
        this.log.warn({ err, path }, 'hot standby: undecodable partition state; left to the failover read');
        this.dirty.delete(k);
        return;
      }
    }
    this.markClean(k, e, info);
  }

  private markClean(k: string, e: WarmPartition, info: LeadershipInfo | null): void {
    e.info = info;
    if (e.hint && info && e.hint.zkVersion <= info.zkVersion) e.hint = undefined;
    e.clean = true;
    this.dirty.delete(k);
  }

  /** The session is gone, and its watches with it: nothing is known to match ZooKeeper any more. */
  private invalidate(): void {
    for (const w of this.topics.values()) {
      w.gen++;
      w.clean = false;
    }
    for (const [k, e] of this.partitions) {
      e.gen++;
      e.clean = false;
      this.dirty.add(k);
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.firstDirtyAt = this.lastDirtyAt = Date.now();
  }
}

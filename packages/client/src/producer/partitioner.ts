/**
 * Partitioners. The default follows Kafka's DefaultPartitioner with sticky partitioning
 * (Kafka 2.4+, KIP-480): an explicit partition wins; a keyed record goes to
 * `toPositive(murmur2(keyBytes)) % numPartitions` (all partitions, available or not); a record
 * without key sticks to one available partition until a batch there is full (`onNewBatch`), then a
 * different available partition is chosen at random. `round-robin` (Kafka's RoundRobinPartitioner)
 * cycles through the available partitions, keys ignored.
 */
import { murmur2, toPositive } from './murmur2.js';
import type { TopicPartitionInfo } from './types.js';

export interface Partitioner {
  /** The partition for a record without explicit partition. */
  partition(topic: string, keyBytes: Buffer | null, partitions: readonly TopicPartitionInfo[]): number;
  /** Called when the record could not join the current batch of `prevPartition` (it is full). */
  onNewBatch?(topic: string, partitions: readonly TopicPartitionInfo[], prevPartition: number): void;
  close?(): void;
}

const randomInt = () => Math.floor(Math.random() * 0x7fffffff);

function available(partitions: readonly TopicPartitionInfo[]): readonly TopicPartitionInfo[] {
  return partitions.filter((p) => p.leader >= 0);
}

/** The partition a key hashes to, byte-compatible with the Java client. */
export function keyPartition(keyBytes: Uint8Array, numPartitions: number): number {
  return toPositive(murmur2(keyBytes)) % numPartitions;
}

/** Kafka's StickyPartitionCache. */
export class StickyPartitionCache {
  private readonly sticky = new Map<string, number>();

  constructor(private readonly random: () => number = randomInt) {}

  partition(topic: string, partitions: readonly TopicPartitionInfo[]): number {
    return this.sticky.get(topic) ?? this.next(topic, partitions, -1);
  }

  /** Picks a new sticky partition different from `prev` (when another one exists). */
  next(topic: string, partitions: readonly TopicPartitionInfo[], prev: number): number {
    const current = this.sticky.get(topic);
    // only change when the caller saw the current one (several records may trigger at once)
    if (current !== undefined && current !== prev) return current;
    const avail = available(partitions);
    let choice: number;
    if (avail.length === 0) {
      choice = toPositive(this.random()) % partitions.length;
    } else if (avail.length === 1) {
      choice = avail[0]!.partition;
    } else {
      do {
        choice = avail[toPositive(this.random()) % avail.length]!.partition;
      } while (choice === current);
    }
    this.sticky.set(topic, choice);
    return choice;
  }
}

export class DefaultPartitioner implements Partitioner {
  private readonly cache: StickyPartitionCache;
  private readonly ignoreKeys: boolean;

  constructor(opts: { ignoreKeys?: boolean; random?: () => number } = {}) {
    this.cache = new StickyPartitionCache(opts.random);
    this.ignoreKeys = opts.ignoreKeys ?? false;
  }

  partition(topic: string, keyBytes: Buffer | null, partitions: readonly TopicPartitionInfo[]): number {
    if (keyBytes && !this.ignoreKeys) return keyPartition(keyBytes, partitions.length);
    return this.cache.partition(topic, partitions);
  }

  onNewBatch(topic: string, partitions: readonly TopicPartitionInfo[], prevPartition: number): void {
    this.cache.next(topic, partitions, prevPartition);
  }
}

export class RoundRobinPartitioner implements Partitioner {
  private readonly counters = new Map<string, number>();

  partition(topic: string, _keyBytes: Buffer | null, partitions: readonly TopicPartitionInfo[]): number {
    const n = this.counters.get(topic) ?? 0;
    this.counters.set(topic, (n + 1) | 0);
    const avail = available(partitions);
    if (avail.length > 0) return avail[toPositive(n) % avail.length]!.partition;
    return toPositive(n) % partitions.length;
  }
}

/** Resolves `partitioner.class`: `default`, `round-robin`, Kafka's class names, or an instance. */
export function createPartitioner(spec: string | Partitioner, opts: { ignoreKeys?: boolean } = {}): Partitioner {
  if (typeof spec !== 'string') return spec;
  const s = spec.trim();
  if (s === 'default' || s === '' || s.endsWith('DefaultPartitioner') || s.endsWith('UniformStickyPartitioner')) {
    return new DefaultPartitioner({ ignoreKeys: opts.ignoreKeys || s.endsWith('UniformStickyPartitioner') });
  }
  if (s === 'round-robin' || s === 'roundrobin' || s.endsWith('RoundRobinPartitioner')) return new RoundRobinPartitioner();
  throw new Error(`Invalid value ${s} for configuration partitioner.class: unknown partitioner (use default or round-robin)`);
}

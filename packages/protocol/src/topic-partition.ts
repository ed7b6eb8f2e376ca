/**
 * Kafka's TopicPartition: a topic name and a partition index. The one declaration of the concept
 * for every package (broker, controller, ZooKeeper layer, client, CLI), with its one string form
 * and a map keyed by it.
 */
export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/**
 * `topic-partition` (Kafka's TopicPartition.toString): the partition's directory name, its key in
 * purgatories and checkpoint files, and how messages name it. The only place that builds it.
 */
export function topicPartitionKey(tp: TopicPartition): string;
export function topicPartitionKey(topic: string, partition: number): string;
export function topicPartitionKey(tpOrTopic: TopicPartition | string, partition?: number): string {
  return typeof tpOrTopic === 'string' ? `${tpOrTopic}-${partition}` : `${tpOrTopic.topic}-${tpOrTopic.partition}`;
}

/** Orders by topic name, then partition index. */
export function compareTopicPartitions(a: TopicPartition, b: TopicPartition): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}

/** A map keyed by (topic, partition), without building a string per lookup. */
export class TopicPartitionMap<V> {
  private readonly byTopic = new Map<string, Map<number, V>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(topic: string, partition: number): V | undefined {
    return this.byTopic.get(topic)?.get(partition);
  }

  has(topic: string, partition: number): boolean {
    return this.byTopic.get(topic)?.has(partition) ?? false;
  }

  set(topic: string, partition: number, value: V): this {
    let partitions = this.byTopic.get(topic);
    if (!partitions) {
      partitions = new Map();
      this.byTopic.set(topic, partitions);
    }
    if (!partitions.has(partition)) this.count++;
    partitions.set(partition, value);
    return this;
  }

  /** Removes the entry; returns its value, or undefined if there was none. */
  delete(topic: string, partition: number): V | undefined {
    const partitions = this.byTopic.get(topic);
    if (!partitions?.has(partition)) return undefined;
    const value = partitions.get(partition);
    partitions.delete(partition);
    this.count--;
    if (partitions.size === 0) this.byTopic.delete(topic);
    return value;
  }

  /** Removes every partition of `topic`; returns how many there were. */
  deleteTopic(topic: string): number {
    const partitions = this.byTopic.get(topic);
    if (!partitions) return 0;
    this.byTopic.delete(topic);
    this.count -= partitions.size;
    return partitions.size;
  }

  clear(): void {
    this.byTopic.clear();
    this.count = 0;
  }

  /** The partitions of one topic held here. */
  partitionsOf(topic: string): ReadonlyMap<number, V> | undefined {
    return this.byTopic.get(topic);
  }

  *entries(): IterableIterator<[TopicPartition, V]> {
    for (const [topic, partitions] of this.byTopic) for (const [partition, value] of partitions) yield [{ topic, partition }, value];
  }

  *keys(): IterableIterator<TopicPartition> {
    for (const [tp] of this.entries()) yield tp;
  }

  *values(): IterableIterator<V> {
    for (const partitions of this.byTopic.values()) yield* partitions.values();
  }

  [Symbol.iterator](): IterableIterator<[TopicPartition, V]> {
    return this.entries();
  }
}

import type { TopicPartition } from './types.js';

/**
 * Java's HashMap / HashSet iteration order, where Kafka's sticky assignors let it decide a result
 * (which member keeps its partitions when not all of them can; which partition of a pair's moves
 * is moved back). A HashMap iterates its buckets in index order, keys within a bucket in insertion
 * order (a resize splits buckets keeping that order); the bucket of a key is
 * (h ^ (h >>> 16)) & (capacity - 1); the capacity starts at 16 and doubles when the size exceeds
 * 0.75 × capacity. Not modelled: tree bins (8+ keys in one bucket), which need colliding hashes.
 */

/** Java's String.hashCode (over UTF-16 code units, int32 arithmetic). */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's TopicPartition.hashCode. */
export function topicPartitionHash(tp: TopicPartition): number {
  return (Math.imul(31, (31 + tp.partition) | 0) + javaStringHash(tp.topic)) | 0;
}

function bucket(hash: number, capacity: number): number {
  return (hash ^ (hash >>> 16)) & (capacity - 1);
}

/** The table capacity of a `new HashMap<>()` after `maxSize` keys were in it at once. */
export function defaultCapacityFor(maxSize: number): number {
  let cap = 16;
  while (maxSize > cap * 0.75) cap *= 2;
  return cap;
}

/**
 * `keys` (in insertion order, distinct) in the order a Java HashMap of `capacity` iterates them.
 * `put` appends a new key to its bucket; `computeIfAbsent` puts it first (`headInsert`).
 */
export function javaHashOrder<K>(keys: readonly K[], hash: (k: K) => number, capacity: number = defaultCapacityFor(keys.length), headInsert = false): K[] {
  return keys
    .map((k, i) => ({ k, i, b: bucket(hash(k), capacity) }))
    .sort((x, y) => x.b - y.b || (headInsert ? y.i - x.i : x.i - y.i))
    .map((x) => x.k);
}

/** A Java HashSet (default constructor) of interned objects that knows which element it iterates first. */
export class JavaHashSet<K> {
  private readonly entries: K[] = [];
  private capacity = 16;

  constructor(private readonly hash: (k: K) => number) {}

  get size(): number {
    return this.entries.length;
  }

  has(k: K): boolean {
    return this.entries.includes(k);
  }

  add(k: K): void {
    if (this.entries.includes(k)) return;
    this.entries.push(k);
    if (this.entries.length > this.capacity * 0.75) this.capacity *= 2;
  }

  delete(k: K): void {
    const i = this.entries.indexOf(k);
    if (i >= 0) this.entries.splice(i, 1);
  }

  /** What `iterator().next()` returns. */
  first(): K | undefined {
    let best: K | undefined;
    let bestBucket = Infinity;
    for (const k of this.entries) {
      const b = bucket(this.hash(k), this.capacity);
      if (b < bestBucket) {
        best = k;
        bestBucket = b;
      }
    }
    return best;
  }
}

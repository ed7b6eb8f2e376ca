import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import type { KafkaZk, PartitionStateWithVersion } from '@samsa/zk-paths';
import type { ControllerContext } from './context.js';
import type { WarmView } from './hot-standby.js';

/** Warm partition states a new controller re-reads from ZooKeeper to check its hot standby. */
export const WARM_SAMPLE_SIZE = 32;

export interface PartitionStatesLoad {
  /** Partition states taken from the hot standby. */
  warm: number;
  /** Partition states read from ZooKeeper (all of them without a hot standby, or after a disagreement). */
  read: number;
  /** Warm states checked against ZooKeeper, and those that disagreed (then every state was read). */
  sampled: number;
  disagreed: string[];
}

/**
 * Fills the context's leadership at failover: from the hot standby's clean entries, reading only
 * what it does not hold; a random sample of the warm entries is read too, and a single
 * disagreement throws the warm view away and reads every partition state (a standby is never
 * trusted blindly). Reads are pipelined (all in flight through the one ZooKeeper client).
 */
export async function loadPartitionStates(
  ctx: ControllerContext,
  kzk: KafkaZk,
  log: Logger,
  warm: WarmView | undefined,
  sampleSize = WARM_SAMPLE_SIZE,
  random: () => number = Math.random,
): Promise<PartitionStatesLoad> {
  const all = ctx.allPartitions();
  const fromWarm: TopicPartition[] = [];
  const toRead: TopicPartition[] = [];
  for (const tp of all) (warm?.partitions.has(topicPartitionKey(tp)) ? fromWarm : toRead).push(tp);
  const sample = pick(fromWarm, sampleSize, random);
  const [read, checked] = await Promise.all([kzk.getPartitionStates(toRead), kzk.getPartitionStates(sample)]);
  // the standby still runs during these reads: an entry whose watch fired since the view changed after it (a
  // leader's ISR write), which explains a sampled difference; only a difference on an entry still clean is one
  const stillClean = (k: string) => warm?.stillClean?.(k) ?? true;
  const disagreed = sample
    .map((tp) => topicPartitionKey(tp))
    .filter((k) => (warm!.partitions.get(k)?.zkVersion ?? -1) !== (checked.get(k)?.zkVersion ?? -1) && stillClean(k));
  if (disagreed.length > 0) {
    log.warn(
      { disagreed: disagreed.slice(0, 10), count: disagreed.length, sampled: sample.length },
      'hot-standby context disagreed with ZooKeeper; reading every partition state',
    );
    const everything = await kzk.getPartitionStates(all);
    for (const tp of all) {
      const s = everything.get(topicPartitionKey(tp));
      if (s) ctx.setLeadership(tp, s);
    }
    return { warm: 0, read: all.length, sampled: sample.length, disagreed };
  }
  // warm entries that changed since the view are read again (a sampled one already was)
  const moved = fromWarm.filter((tp) => !stillClean(topicPartitionKey(tp)) && !checked.has(topicPartitionKey(tp)));
  const reread = moved.length > 0 ? await kzk.getPartitionStates(moved) : new Map<string, PartitionStateWithVersion>();
  let changed = 0;
  for (const tp of fromWarm) {
    const k = topicPartitionKey(tp);
    const clean = stillClean(k);
    if (!clean) changed++;
    const s = clean ? warm!.partitions.get(k) : (checked.get(k) ?? reread.get(k));
    if (s) ctx.setLeadership(tp, s);
  }
  for (const tp of toRead) {
    const s = read.get(topicPartitionKey(tp));
    if (s) ctx.setLeadership(tp, s);
  }
  return { warm: fromWarm.length - changed, read: toRead.length + changed, sampled: sample.length, disagreed };
}

/** Up to `n` distinct elements, uniformly (a partial Fisher–Yates on a copy). */
function pick<T>(xs: readonly T[], n: number, random: () => number): T[] {
  const a = xs.slice();
  const k = Math.min(n, a.length);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (a.length - i));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, k);
}

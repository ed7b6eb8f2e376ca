import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { KafkaZk, PartitionStateWithVersion } from '@samsa/zk-paths';
import type { ControllerContext } from './context.js';

/** A partition's leader/ISR as a state change starts from it, and whether it was just read from ZooKeeper. */
export interface CurrentState extends PartitionStateWithVersion {
  fromZk: boolean;
}

/**
 * The states an election or ISR change starts from. Kafka reads every partition's state znode before
 * changing it; here the first pass takes the controller's own view (what it wrote, read at failover,
 * or learned from an ISR change notification) and only partitions it does not know are read. That is
 * safe because every write that follows is conditional on the zkVersion the view holds: a leader that
 * changed the ISR since makes the write fail with BAD_VERSION, and the caller's next pass reads
 * ZooKeeper (`trustContext` false). A decision NOT to write (replica already out of the ISR, no
 * eligible leader) must never rest on the view alone: callers re-check those with a read.
 */
export async function currentStates(
  ctx: ControllerContext,
  kzk: KafkaZk,
  tps: readonly TopicPartition[],
  trustContext: boolean,
): Promise<Map<string, CurrentState>> {
  const out = new Map<string, CurrentState>();
  const toRead: TopicPartition[] = [];
  for (const tp of tps) {
    const known = trustContext ? ctx.leadershipOf(tp) : undefined;
    if (known && known.zkVersion >= 0) out.set(topicPartitionKey(tp), { state: known.state, zkVersion: known.zkVersion, fromZk: false });
    else toRead.push(tp);
  }
  if (toRead.length > 0) {
    for (const [k, s] of await kzk.getPartitionStates(toRead)) out.set(k, { ...s, fromZk: true });
  }
  return out;
}

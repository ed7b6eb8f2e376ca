import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import { IsrChangeNotificationSequenceZNode, IsrChangeNotificationZNode, ZNodeDecodeError, controllerFencedDelete, type KafkaZk } from '@samsa/zk-paths';
import type { ControllerContext } from './context.js';
import type { RequestBatch } from './request-batch.js';

export interface IsrChangeDeps {
  ctx: ControllerContext;
  kzk: KafkaZk;
  batch: RequestBatch;
  log: Logger;
  stateChangeLog: Logger;
}

/**
 * Leaders wrote ISR changes to partition-state znodes and announced them under
 * /isr_change_notification (Kafka's IsrChangeNotificationHandler): re-read those states, tell every
 * broker (UpdateMetadata), and remove the processed notifications (fenced, as Kafka's
 * deleteIsrChangeNotifications). Notification reads, state reads and deletes are each pipelined.
 */
export async function processIsrChangeNotifications(d: IsrChangeDeps): Promise<void> {
  const zk = d.kzk.zk;
  const children = await zk.getChildren(IsrChangeNotificationZNode.path).catch(() => [] as string[]);
  const paths = children.map((c) => `${IsrChangeNotificationZNode.path}/${c}`);
  const nodes = await Promise.all(paths.map((p) => zk.getOrNull(p)));
  const changed = new Map<string, TopicPartition>();
  nodes.forEach((n, i) => {
    if (!n) return;
    try {
      for (const tp of IsrChangeNotificationSequenceZNode.decode(n.data, paths[i]!)) changed.set(topicPartitionKey(tp), tp);
    } catch (err) {
      if (!(err instanceof ZNodeDecodeError)) throw err;
      d.log.warn({ path: paths[i], err: err.message }, 'ignoring a malformed ISR change notification');
    }
  });
  await Promise.all(paths.map((p) => controllerFencedDelete(zk, d.ctx.epochZkVersion, p).catch(() => undefined)));
  const tps = [...changed.values()].filter((tp) => d.ctx.assignment(tp) && !d.ctx.topicsToBeDeleted.has(tp.topic));
  if (tps.length === 0) return;
  const states = await d.kzk.getPartitionStates(tps);
  for (const tp of tps) {
    const st = states.get(topicPartitionKey(tp));
    if (st) d.ctx.setLeadership(tp, st);
  }
  d.stateChangeLog.info(
    { notifications: paths.length, partitions: tps.length, examples: tps.slice(0, 5).map((p) => topicPartitionKey(p)) },
    'ISR changes propagated',
  );
  d.batch.addUpdateMetadata(d.ctx.liveBrokerIds(), tps);
  d.batch.send();
}

import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import { KafkaZk, ZkClient } from '@samsa/zk-paths';

export interface ClusterSummary {
  controllerId: number | null;
  controllerEpoch: number | null;
  liveBrokers: number[];
  partitions: number;
  offline: number;
  underReplicated: number;
}

/**
 * What an operator checks first, read from ZooKeeper: the controller and its epoch, live brokers,
 * and how many partitions are offline (no live leader) or under-replicated (ISR smaller than the
 * replica set). Null when ZooKeeper does not answer.
 */
export async function readClusterSummary(connect: string, timeoutMs = 5000): Promise<ClusterSummary | null> {
  let zk: ZkClient;
  try {
    zk = await ZkClient.connect({ connectString: connect, sessionTimeoutMs: 6000, connectionTimeoutMs: timeoutMs });
  } catch {
    return null;
  }
  try {
    return await summarize(new KafkaZk(zk));
  } finally {
    await zk.close();
  }
}

/** The summary from any KafkaZk (a real session or an in-memory fake). */
export async function summarize(kzk: KafkaZk): Promise<ClusterSummary> {
  {
    const liveBrokers = await kzk.getBrokerIds();
    const tps: Array<TopicPartition & { replicas: number[] }> = [];
    for (const topic of await kzk.getAllTopics()) {
      const a = await kzk.getTopicAssignment(topic);
      for (const [partition, replicas] of a?.partitions ?? []) tps.push({ topic, partition, replicas });
    }
    const states = await kzk.getPartitionStates(tps);
    let offline = 0;
    let underReplicated = 0;
    for (const tp of tps) {
      const st = states.get(topicPartitionKey(tp))?.state;
      if (!st || st.leader < 0 || !liveBrokers.includes(st.leader)) offline++;
      else if (st.isr.length < tp.replicas.length) underReplicated++;
    }
    return {
      controllerId: await kzk.getControllerId(),
      controllerEpoch: (await kzk.getControllerEpoch())?.epoch ?? null,
      liveBrokers,
      partitions: tps.length,
      offline,
      underReplicated,
    };
  }
}

export function formatClusterSummary(s: ClusterSummary): string[] {
  return [
    `controller: ${s.controllerId === null ? 'none' : `broker ${s.controllerId}`} (controller epoch ${s.controllerEpoch ?? '-'})`,
    `live brokers: ${s.liveBrokers.length > 0 ? s.liveBrokers.join(',') : 'none'}`,
    `partitions: ${s.partitions} (offline ${s.offline}, under-replicated ${s.underReplicated})`,
  ];
}

import { describe, expect, it } from 'vitest';
import { FakeZkClient, KafkaZk, TopicPartitionStateZNode, newTopicId, type BrokerInfo } from '@samsa/zk-paths';
import { formatClusterSummary, summarize } from './cluster-summary.js';

const broker = (id: number): BrokerInfo => ({
  id,
  endpoints: [{ listenerName: 'PLAINTEXT', host: 'h', port: 9092 + id, securityProtocol: 'PLAINTEXT' }],
  rack: null,
  jmxPort: -1,
  timestamp: '0',
  features: {},
  version: 5,
});

describe('cluster summary', () => {
  it('cluster summary – counts offline and under-replicated partitions and names the controller', async () => {
    const kzk = new KafkaZk(new FakeZkClient());
    await kzk.createPersistentPaths();
    await kzk.registerBroker(broker(0));
    await kzk.registerBroker(broker(1));
    await kzk.registerControllerAndIncrementEpoch(1);
    await kzk.createTopic(
      't',
      newTopicId(),
      new Map([
        [0, [0, 1]],
        [1, [1, 2]],
        [2, [2, 0]],
      ]),
      {},
    );
    const put = async (p: number, leader: number, isr: number[]) => {
      await kzk.zk.create(TopicPartitionStateZNode.path('t', p), TopicPartitionStateZNode.encode({ leader, leaderEpoch: 0, isr, controllerEpoch: 1 }), {
        mkdirp: true,
      });
    };
    await put(0, 0, [0, 1]); // healthy
    await put(1, 1, [1]); // under-replicated (broker 2 is gone)
    await put(2, 2, [2]); // offline: its leader is not registered
    const s = await summarize(kzk);
    expect(s).toEqual({ controllerId: 1, controllerEpoch: 1, liveBrokers: [0, 1], partitions: 3, offline: 1, underReplicated: 1 });
    expect(formatClusterSummary(s)).toEqual([
      'controller: broker 1 (controller epoch 1)',
      'live brokers: 0,1',
      'partitions: 3 (offline 1, under-replicated 1)',
    ]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { API_KEYS, ErrorCode, RecordBatch } from '@samsa/protocol';
import { FakeCluster } from '../testing/fake-cluster.js';
import { Producer } from './producer.js';

const ok = (index: number, baseOffset: bigint) => ({
  index,
  errorCode: 0,
  baseOffset,
  logAppendTimeMs: -1n,
  logStartOffset: 0n,
  recordErrors: [],
  errorMessage: null,
  currentLeader: { leaderId: -1, leaderEpoch: -1 },
});

/**
 * Broker 0 led t-0 and then lost it without knowing (a leader cut off from ZooKeeper: the controller
 * moved the partition to broker 1 and no longer updates broker 0). Broker 0 keeps answering Metadata
 * with itself as leader at the old epoch, and acks=all Produce with REQUEST_TIMED_OUT.
 */
async function staleLeaderCluster() {
  const fc = await FakeCluster.start({ brokers: 2 });
  fc.addTopic('t', [[0, 1]]);
  const at = { b0: [] as string[], b1: [] as string[] };
  let moved = false;
  const b0 = fc.broker(0);
  const b1 = fc.broker(1);
  for (const b of [b0, b1]) b.on(API_KEYS.InitProducerId, () => ({ throttleTimeMs: 0, errorCode: 0, producerId: 9n, producerEpoch: 0 }));
  const produce =
    (name: 'b0' | 'b1') => async (req: { topicData: Array<{ name: string; partitionData: Array<{ index: number; records: Buffer | null }> }> }) => {
      const p = req.topicData[0]!.partitionData[0]!;
      const values = [...new RecordBatch(p.records!)].map((r) => r.value!.toString());
      if (name === 'b0' && moved) {
        at.b0.push(...values.map((v) => `late:${v}`));
        await new Promise((r) => setTimeout(r, 300)); // waits for a high watermark that never comes
        return {
          throttleTimeMs: 0,
          nodeEndpoints: [],
          responses: [{ name: 't', partitionResponses: [{ ...ok(p.index, -1n), errorCode: ErrorCode.REQUEST_TIMED_OUT }] }],
        };
      }
      const log = at[name];
      const base = BigInt(log.length);
      log.push(...values);
      return { throttleTimeMs: 0, nodeEndpoints: [], responses: [{ name: 't', partitionResponses: [ok(p.index, base)] }] };
    };
  b0.on(API_KEYS.Produce, produce('b0'));
  b1.on(API_KEYS.Produce, produce('b1'));
  const move = () => {
    moved = true;
    const p = fc.topics.get('t')!.partitions[0]!;
    p.leader = 1;
    p.leaderEpoch = 1;
    // broker 0's own (stale) view: itself, epoch 0
    b0.on(API_KEYS.Metadata, () => ({
      throttleTimeMs: 0,
      brokers: fc.brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: null })),
      clusterId: fc.clusterId,
      controllerId: 1,
      clusterAuthorizedOperations: -2147483648,
      topics: [
        {
          errorCode: 0,
          name: 't',
          topicId: fc.topics.get('t')!.topicId,
          isInternal: false,
          topicAuthorizedOperations: -2147483648,
          partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 0, leaderEpoch: 0, replicaNodes: [0, 1], isrNodes: [0, 1], offlineReplicas: [] }],
        },
      ],
    }));
  };
  return { fc, at, move };
}

describe('Producer and a stale leader', () => {
  let fc: FakeCluster | undefined;
  afterEach(async () => {
    await fc?.close();
    fc = undefined;
  });

  it('producer – a leader that only times out and serves stale metadata is left: metadata is asked of another broker, and an older leader epoch is never taken back', async () => {
    const s = await staleLeaderCluster();
    fc = s.fc;
    const p = new Producer({
      'bootstrap.servers': s.fc.broker(0).address,
      'linger.ms': 1,
      'retry.backoff.ms': 20,
      'delivery.timeout.ms': 15_000,
      'request.timeout.ms': 2000,
      'metadata.max.age.ms': 100,
    });
    try {
      await p.send({ topic: 't', partition: 0, value: 'first' });
      expect(s.at.b0).toEqual(['first']);
      s.move();
      // every open connection is busy with the stuck Produce: the refresh goes to broker 1
      const m = await p.send({ topic: 't', partition: 0, value: 'second' });
      expect(m.offset).toBe(0n);
      expect(s.at.b1).toEqual(['second']);
      // metadata refreshes every 100 ms, from broker 0 too: its epoch-0 view never wins over epoch 1
      const lateBefore = s.at.b0.length;
      for (let i = 0; i < 10; i++) {
        await p.send({ topic: 't', partition: 0, value: `more-${i}` });
        await new Promise((r) => setTimeout(r, 60));
      }
      expect(s.at.b1).toEqual(['second', ...Array.from({ length: 10 }, (_, i) => `more-${i}`)]);
      expect(s.at.b0.length).toBe(lateBefore);
    } finally {
      await p.close();
    }
  });
});

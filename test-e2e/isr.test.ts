import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeRecordBatch } from '@samsa/protocol';
import { newTopicId } from '@samsa/zk-paths';
import { describeCluster, TestCluster, until } from './harness.js';
import { rawRequest } from './clients/wire.js';

/** One produce of a single record to `partition` through `address`; the partition's error code. */
async function produce(address: string, topic: string, partition: number, acks: number, value: string): Promise<number> {
  const r = await rawRequest(address, 0, 9, {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records: encodeRecordBatch({ records: [{ value }] }) }] }],
  });
  return r.responses[0]!.partitionResponses[0]!.errorCode;
}

describeCluster('ISR and min.insync.replicas (RF=3, min.insync.replicas=2)', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3, overrides: { 'replica.lag.time.max.ms': '3000', 'min.insync.replicas': '2' } });
  });
  afterAll(async () => {
    for (const b of c?.brokers ?? []) await b.resume();
    await c?.stop();
  });

  const isrOf = async (topic: string) => (await c.admin.getPartitionState({ topic, partition: 0 }))?.state;

  it('isr – a SIGSTOPped follower leaves the ISR after replica.lag.time.max.ms and rejoins after SIGCONT', async () => {
    await c.admin.createTopic('stall', newTopicId(), new Map([[0, [0, 1, 2]]]), {});
    await c.waitForLeaders('stall', 1);
    const leader = c.broker(0);
    // the leader serves once the controller's LeaderAndIsr reached it
    await until(async () => (await produce(leader.address, 'stall', 0, -1, 'a')) === 0, 'first acks=all produce', 15_000, 100);
    const follower = c.broker(2);
    await follower.pause();
    const stoppedAt = Date.now();
    // writes keep flowing with the two others (min.insync.replicas=2)
    const left = await until(
      async () => {
        await produce(leader.address, 'stall', 0, 1, 'b');
        const s = await isrOf('stall');
        return s && !s.isr.includes(2) ? Date.now() - stoppedAt : undefined;
      },
      'follower out of the ISR',
      20_000,
      200,
    );
    expect(left).toBeGreaterThanOrEqual(3000);
    expect(await produce(leader.address, 'stall', 0, -1, 'c')).toBe(0);
    await follower.resume();
    await until(async () => (await isrOf('stall'))?.isr.includes(2), 'follower back in the ISR', 30_000);
  });

  it('isr – with 2 of 3 brokers stopped acks=all gets NOT_ENOUGH_REPLICAS and acks=1 still works; the ISR regrows after restart', async () => {
    await c.admin.createTopic('minisr', newTopicId(), new Map([[0, [0, 1, 2]]]), {});
    await c.waitForLeaders('minisr', 1);
    await until(async () => (await isrOf('minisr'))?.isr.length === 3, 'full ISR');
    await until(async () => (await produce(c.broker(0).address, 'minisr', 0, -1, 'w')) === 0, 'first acks=all produce', 15_000, 100);
    await Promise.all([c.broker(1).kill(), c.broker(2).kill()]);
    const survivor = c.broker(0);
    // the survivor leads with itself alone in the ISR (dead followers removed by the controller or by shrinking)
    await until(
      async () => {
        const s = await isrOf('minisr');
        return s?.leader === 0 && s.isr.length === 1;
      },
      'ISR down to the survivor',
      30_000,
    );
    await until(async () => (await produce(survivor.address, 'minisr', 0, -1, 'x')) === 19, 'NOT_ENOUGH_REPLICAS (19)', 15_000, 200);
    expect(await produce(survivor.address, 'minisr', 0, 1, 'y')).toBe(0);
    for (const id of [1, 2]) {
      await c.broker(id).launch();
      await c.broker(id).waitReady();
    }
    await until(async () => (await isrOf('minisr'))?.isr.length === 3, 'ISR regrown to 3', 60_000);
    await until(async () => (await produce(survivor.address, 'minisr', 0, -1, 'z')) === 0, 'acks=all accepted again', 15_000, 200);
  });
});

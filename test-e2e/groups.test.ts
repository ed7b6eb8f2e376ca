/**
 * Consumer groups against a 3-broker cluster: `__consumer_offsets` created on the first
 * FindCoordinator (50 partitions, replication factor 3, compacted), the coordinator is the leader
 * of partition abs(hash(group)) % 50.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, until } from './harness.js';
import { rawRequest, waitForBrokerMetadata } from './clients/wire.js';

const COORDINATOR_NOT_AVAILABLE = 15;

/** Java's String.hashCode and Kafka's Utils.abs, written out independently of the broker's code. */
function offsetsPartition(groupId: string, partitions = 50): number {
  let h = 0;
  for (const ch of groupId) for (let i = 0; i < ch.length; i++) h = (Math.imul(31, h) + ch.charCodeAt(i)) | 0;
  return (h === -2147483648 ? 0 : Math.abs(h)) % partitions;
}

describe('consumer groups against a 3-broker cluster', () => {
  let c: TestCluster;

  beforeAll(async () => {
    c = await TestCluster.start({ brokers: 3, overrides: { 'group.initial.rebalance.delay.ms': '500' } });
    await waitForBrokerMetadata(c.bootstrap.split(','), () => c.controllerId());
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('groups – the first FindCoordinator creates __consumer_offsets (50 partitions, RF 3, compact); every broker names the leader of the group’s partition', async () => {
    const group = 'find-me';
    const first = await rawRequest(c.brokers[0]!.address, 10, 3, { key: group, keyType: 0, coordinatorKeys: [] });
    expect(first.errorCode).toBe(COORDINATOR_NOT_AVAILABLE);
    const assignment = await until(() => c.admin.getTopicAssignment('__consumer_offsets'), '__consumer_offsets in ZooKeeper');
    expect(assignment.partitions.size).toBe(50);
    for (const replicas of assignment.partitions.values()) expect(replicas).toHaveLength(3);
    expect(await c.admin.getTopicConfig('__consumer_offsets')).toMatchObject({ 'cleanup.policy': 'compact', 'compression.type': 'producer' });
    await c.waitForLeaders('__consumer_offsets', 50);
    const p = offsetsPartition(group);
    const leader = await c.leaderOf('__consumer_offsets', p);
    for (const b of c.brokers) {
      const r = await until(async () => {
        const x = await rawRequest(b.address, 10, 3, { key: group, keyType: 0, coordinatorKeys: [] });
        return x.errorCode === 0 ? x : null;
      }, `FindCoordinator from broker ${b.id}`);
      expect(`${r.host}:${r.port}`).toBe(c.broker(leader).address);
      expect(r.nodeId).toBe(leader);
    }
    // v4+: batched keys
    const groups = ['a', 'b', 'find-me'];
    const batched = await rawRequest(c.brokers[1]!.address, 10, 4, { key: '', keyType: 0, coordinatorKeys: groups });
    for (const [i, g] of groups.entries()) {
      const x = batched.coordinators[i]!;
      expect(x.key).toBe(g);
      expect(x.errorCode).toBe(0);
      expect(x.nodeId).toBe(await c.leaderOf('__consumer_offsets', offsetsPartition(g)));
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { KafkaError } from '@samsa/protocol';
import { assignReplicasToBrokers, rackAlternatedBrokerList, type BrokerMetadata } from './admin-utils.js';

const brokers = (ids: number[], rack?: (id: number) => string): BrokerMetadata[] => ids.map((id) => ({ id, rack: rack ? rack(id) : null }));
const asObj = (m: Map<number, number[]>) => Object.fromEntries(m);

describe('assignment', () => {
  it('assignment – rack-unaware matches Kafka for a fixed start index (AdminUtils test vectors)', () => {
    // Kafka's AdminUtilsTest.testReplicaAssignment: 5 brokers, 10 partitions, RF 3, start index 0
    const got = assignReplicasToBrokers(brokers([0, 1, 2, 3, 4]), 10, 3, { fixedStartIndex: 0 });
    expect(asObj(got)).toEqual({
      0: [0, 1, 2],
      1: [1, 2, 3],
      2: [2, 3, 4],
      3: [3, 4, 0],
      4: [4, 0, 1],
      5: [0, 2, 3],
      6: [1, 3, 4],
      7: [2, 4, 0],
      8: [3, 0, 1],
      9: [4, 1, 2],
    });
  });

  it('assignment – leaders spread evenly and no partition repeats a broker', () => {
    for (let trial = 0; trial < 50; trial++) {
      const got = assignReplicasToBrokers(brokers([0, 1, 2]), 6, 3);
      const leaders = [...got.values()].map((r) => r[0]);
      for (const b of [0, 1, 2]) expect(leaders.filter((l) => l === b)).toHaveLength(2);
      for (const r of got.values()) expect(new Set(r).size).toBe(3);
    }
  });

  it('assignment – partition increase continues from startPartitionId', () => {
    const got = assignReplicasToBrokers(brokers([0, 1, 2]), 2, 2, { fixedStartIndex: 0, startPartitionId: 3 });
    expect([...got.keys()]).toEqual([3, 4]);
  });

  it('assignment – rack alternated list interleaves racks', () => {
    const list = rackAlternatedBrokerList(brokers([0, 1, 2, 3, 4, 5, 6, 7, 8], (id) => `rack${Math.floor(id / 3) + 1}`));
    expect(list).toEqual([0, 3, 6, 1, 4, 7, 2, 5, 8]);
  });

  it('assignment – rack-aware puts every replica of a partition on a different rack when racks suffice', () => {
    const bs = brokers([0, 1, 2, 3, 4, 5], (id) => ['a', 'b', 'c'][id % 3]!);
    for (let trial = 0; trial < 50; trial++) {
      const got = assignReplicasToBrokers(bs, 12, 3);
      for (const r of got.values()) {
        expect(new Set(r.map((id) => bs[id]!.rack)).size).toBe(3);
        expect(new Set(r).size).toBe(3);
      }
    }
  });

  it('assignment – rack-aware matches Kafka for a fixed start index', () => {
    // Kafka's AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers
    const racks: Record<number, string> = { 0: 'rack1', 1: 'rack3', 2: 'rack3', 3: 'rack2', 4: 'rack2', 5: 'rack1' };
    const bs = brokers([0, 1, 2, 3, 4, 5], (id) => racks[id]!);
    expect(rackAlternatedBrokerList(bs)).toEqual([0, 3, 1, 5, 4, 2]);
    expect(rackAlternatedBrokerList(bs.filter((b) => b.id !== 5))).toEqual([0, 3, 1, 4, 2]);
    const got = assignReplicasToBrokers(bs, 7, 3, { fixedStartIndex: 0, startPartitionId: 0 });
    expect(asObj(got)).toEqual({
      0: [0, 3, 1],
      1: [3, 1, 5],
      2: [1, 5, 4],
      3: [5, 4, 2],
      4: [4, 2, 0],
      5: [2, 0, 3],
      6: [0, 4, 2],
    });
  });

  it('assignment – invalid replication factor and partition counts raise Kafka errors', () => {
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as KafkaError;
      }
      throw new Error('expected an error');
    };
    expect(err(() => assignReplicasToBrokers(brokers([0, 1]), 1, 3)).errorName).toBe('INVALID_REPLICATION_FACTOR');
    expect(err(() => assignReplicasToBrokers(brokers([0, 1]), 0, 1)).errorName).toBe('INVALID_PARTITIONS');
    expect(err(() => assignReplicasToBrokers(brokers([0, 1]), 1, 0)).errorName).toBe('INVALID_REPLICATION_FACTOR');
    expect(
      err(() =>
        assignReplicasToBrokers(
          [
            { id: 0, rack: 'a' },
            { id: 1, rack: null },
          ],
          1,
          1,
        ),
      ).errorName,
    ).toBe('INVALID_REPLICATION_FACTOR');
  });
});

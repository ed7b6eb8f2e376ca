import { describe, expect, it } from 'vitest';
import { DefaultPartitioner, RoundRobinPartitioner, createPartitioner, keyPartition } from './partitioner.js';
import { murmur2 } from './murmur2.js';

const parts = (n: number, down: number[] = []) => Array.from({ length: n }, (_, p) => ({ partition: p, leader: down.includes(p) ? -1 : 0, leaderEpoch: 0 }));

describe('partitioner', () => {
  it('partitioner – keyed records use toPositive(murmur2(key)) % numPartitions, unavailable partitions included', () => {
    const p = new DefaultPartitioner();
    const key = Buffer.from('foobar');
    expect(p.partition('t', key, parts(7, [0, 1, 2, 3, 4, 5, 6]))).toBe((murmur2(key) & 0x7fffffff) % 7);
    expect(keyPartition(Buffer.from('21'), 3)).toBe((-973932308 & 0x7fffffff) % 3);
  });

  it('partitioner – null keys stick to one available partition until onNewBatch, then switch to another', () => {
    let r = 0;
    const p = new DefaultPartitioner({ random: () => r++ });
    const ps = parts(4, [1]);
    const first = p.partition('t', null, ps);
    expect(first).not.toBe(1);
    for (let i = 0; i < 100; i++) expect(p.partition('t', null, ps)).toBe(first);
    p.onNewBatch('t', ps, first);
    const second = p.partition('t', null, ps);
    expect(second).not.toBe(first);
    expect(second).not.toBe(1);
    // a stale onNewBatch (for a partition no longer sticky) changes nothing
    p.onNewBatch('t', ps, first);
    expect(p.partition('t', null, ps)).toBe(second);
  });

  it('partitioner – round robin cycles through available partitions and ignores keys', () => {
    const p = new RoundRobinPartitioner();
    const got = Array.from({ length: 6 }, () => p.partition('t', Buffer.from('k'), parts(4, [2])));
    expect(got).toEqual([0, 1, 3, 0, 1, 3]);
  });

  it('partitioner – partitioner.class names resolve, unknown ones are refused', () => {
    expect(createPartitioner('org.apache.kafka.clients.producer.RoundRobinPartitioner')).toBeInstanceOf(RoundRobinPartitioner);
    expect(createPartitioner('default')).toBeInstanceOf(DefaultPartitioner);
    expect(() => createPartitioner('nope')).toThrow(/partitioner.class/);
  });
});

import { describe, expect, it } from 'vitest';
import { TopicPartitionMap, compareTopicPartitions, topicPartitionKey } from './topic-partition.js';

describe('topic partition', () => {
  it("topic partition – the key is Kafka's TopicPartition.toString, from an object or its two parts", () => {
    expect(topicPartitionKey({ topic: 'orders-eu', partition: 12 })).toBe('orders-eu-12');
    expect(topicPartitionKey('orders-eu', 12)).toBe('orders-eu-12');
  });

  it('topic partition – the map keeps one entry per (topic, partition), counts them and drops emptied topics', () => {
    const m = new TopicPartitionMap<string>();
    m.set('a', 0, 'x').set('a', 1, 'y').set('a-1', 0, 'z').set('a', 0, 'x2');
    expect(m.size).toBe(3);
    expect(m.get('a', 0)).toBe('x2');
    // no confusion between topic "a" partition 1 and topic "a-1"
    expect(m.get('a-1', 0)).toBe('z');
    expect(m.has('a', 2)).toBe(false);
    expect([...m.keys()].sort(compareTopicPartitions)).toEqual([
      { topic: 'a', partition: 0 },
      { topic: 'a', partition: 1 },
      { topic: 'a-1', partition: 0 },
    ]);
    expect(m.delete('a', 0)).toBe('x2');
    expect(m.delete('a', 0)).toBeUndefined();
    expect(m.delete('a', 1)).toBe('y');
    expect(m.partitionsOf('a')).toBeUndefined();
    expect(m.size).toBe(1);
    expect([...m.values()]).toEqual(['z']);
    m.clear();
    expect(m.size).toBe(0);
  });

  it('topic partition – deleteTopic removes every partition of one topic and keeps the count', () => {
    const m = new TopicPartitionMap<string>();
    m.set('a', 0, 'x').set('a', 1, 'y').set('a-1', 0, 'z');
    expect(m.deleteTopic('a')).toBe(2);
    expect(m.deleteTopic('a')).toBe(0);
    expect(m.size).toBe(1);
    expect(m.get('a', 1)).toBeUndefined();
    expect(m.get('a-1', 0)).toBe('z');
  });
});

import { topicPartitionKey } from '@samsa/protocol';
import { describe, expect, it } from 'vitest';
import { consumerLag } from './lag.js';

describe('consumerLag', () => {
  const hw = new Map([
    ['t-0', 100n],
    ['t-1', 50n],
  ]);
  const end = (topic: string, partition: number) => hw.get(topicPartitionKey(topic, partition));

  it('metrics – lag is the high watermark minus the committed offset, per group and partition', () => {
    const lag = consumerLag(
      [
        {
          groupId: 'a',
          offsets: [
            { topic: 't', partition: 0, offset: 90n },
            { topic: 't', partition: 1, offset: 50n },
          ],
        },
        { groupId: 'b', offsets: [{ topic: 't', partition: 0, offset: 0n }] },
      ],
      end,
    );
    expect(lag).toEqual([
      { group: 'a', topic: 't', partition: 0, lag: 10 },
      { group: 'a', topic: 't', partition: 1, lag: 0 },
      { group: 'b', topic: 't', partition: 0, lag: 100 },
    ]);
  });

  it('metrics – partitions this broker does not lead are skipped', () => {
    expect(
      consumerLag(
        [
          {
            groupId: 'a',
            offsets: [
              { topic: 't', partition: 7, offset: 3n },
              { topic: 'u', partition: 0, offset: 1n },
            ],
          },
        ],
        end,
      ),
    ).toEqual([]);
  });

  it('metrics – an offset past the end (truncated log) or none (-1) counts as no lag', () => {
    const lag = consumerLag(
      [
        {
          groupId: 'a',
          offsets: [
            { topic: 't', partition: 1, offset: 70n },
            { topic: 't', partition: 0, offset: -1n },
          ],
        },
      ],
      end,
    );
    expect(lag.map((l) => l.lag)).toEqual([0, 0]);
  });
});

import { describe, expect, it } from 'vitest';
import { countErrorCodes, errorName } from './error-counts.js';

describe('countErrorCodes', () => {
  it('metrics – counts every errorCode field in a response, nested ones and NONE included', () => {
    const body = {
      throttleTimeMs: 0,
      errorCode: 0,
      responses: [
        { topic: 'a', partitions: [{ errorCode: 0, records: Buffer.from([0, 0]) }, { errorCode: 6 }] },
        { topic: 'b', partitions: [{ errorCode: 6, highWatermark: 5n }] },
      ],
    };
    expect([...countErrorCodes(body)].sort()).toEqual([
      [0, 2],
      [6, 2],
    ]);
  });

  it('metrics – record buffers are not walked and null bodies count nothing', () => {
    const buf = Buffer.from('{"errorCode":1}');
    expect(countErrorCodes({ records: buf }).size).toBe(0);
    expect(countErrorCodes(null).size).toBe(0);
  });

  it('metrics – error names are Kafka\'s', () => {
    expect(errorName(0)).toBe('NONE');
    expect(errorName(6)).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(errorName(9999)).toBe('UNKNOWN_9999');
  });
});

import { describe, expect, it } from 'vitest';
import { analyzeRecords, completeBatchesLength } from './batch-header.js';
import { batchOf } from './test-support.js';

describe('batch header', () => {
  it('batch header – completeBatchesLength leaves out a partial trailing batch', () => {
    const a = batchOf(3, 100, { baseOffset: 0n });
    const b = batchOf(5, 200, { baseOffset: 3n });
    const both = Buffer.concat([a, b]);
    expect(completeBatchesLength(both)).toBe(both.length);
    // cut anywhere inside the second batch (its length field included): only the first is whole
    for (const cut of [a.length + 1, a.length + 11, a.length + 12, both.length - 1]) {
      const part = both.subarray(0, cut);
      expect(completeBatchesLength(part)).toBe(a.length);
      expect(analyzeRecords(part.subarray(0, completeBatchesLength(part)), { maxMessageBytes: 1 << 20, verifyCrc: true }).lastOffset).toBe(2n);
    }
    expect(completeBatchesLength(a.subarray(0, a.length - 1))).toBe(0);
    expect(completeBatchesLength(Buffer.alloc(0))).toBe(0);
  });
});

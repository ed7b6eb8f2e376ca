import { describe, expect, it } from 'vitest';
import { RecordBatch } from '@samsa/protocol';
import { ProducerBatch } from './batch.js';

const noCallback = (): void => undefined;

function batchOf(n: number): ProducerBatch {
  const b = new ProducerBatch('t', 0, Buffer.alloc(4096), 0, 1000);
  for (let i = 0; i < n; i++) expect(b.tryAppend(1000 + i, null, Buffer.from(`value-${i}`), null, noCallback)).toBe(true);
  return b;
}

describe('ProducerBatch', () => {
  it('producer batch – the bytes that leave carry a valid CRC over the producer state stamped after sealing', () => {
    const b = batchOf(3);
    b.seal();
    b.setProducerState(42n, 3, 17);
    const rb = new RecordBatch(b.wireBytes());
    expect(rb.isValidCrc()).toBe(true);
    expect([rb.producerId, rb.producerEpoch, rb.baseSequence]).toEqual([42n, 3, 17]);
    expect(rb.recordCount).toBe(3);
  });

  it('producer batch – stamping again (an epoch bump before a retry) gives the next wire bytes a CRC of their own', () => {
    const b = batchOf(2);
    const first = new RecordBatch(Buffer.from(b.wireBytes()));
    b.setProducerState(7n, 1, 0);
    const again = new RecordBatch(b.wireBytes());
    expect(first.isValidCrc()).toBe(true);
    expect(again.isValidCrc()).toBe(true);
    expect(again.crc).not.toBe(first.crc);
    expect([again.producerId, again.producerEpoch]).toEqual([7n, 1]);
  });
});

import { describe, expect, it } from 'vitest';
import { encodeEndTxnMarkerBatch, encodeRecordBatch, recordBatches } from '@samsa/protocol';
import { AbortedTransactionFilter, type AbortedTransaction } from './aborted-transactions.js';

/** A partition log built by hand: data batches of producers and their markers, offsets in order. */
class Log {
  private readonly parts: Buffer[] = [];
  private next = 0n;

  data(producerId: bigint, values: string[], transactional = true): this {
    this.parts.push(
      encodeRecordBatch({ baseOffset: this.next, producerId, producerEpoch: 0, baseSequence: 0, transactional, records: values.map((v) => ({ value: v })) }),
    );
    this.next += BigInt(values.length);
    return this;
  }

  marker(producerId: bigint, commit: boolean): this {
    this.parts.push(encodeEndTxnMarkerBatch({ baseOffset: this.next, producerId, producerEpoch: 0, commit, coordinatorEpoch: 0 }));
    this.next += 1n;
    return this;
  }

  /** The values a consumer returns, reading the whole log with the given aborted list. */
  read(aborted: AbortedTransaction[] | null, readCommitted: boolean, from = 0n): string[] {
    const filter = new AbortedTransactionFilter(aborted, readCommitted);
    const out: string[] = [];
    for (const b of recordBatches(Buffer.concat(this.parts))) {
      if (b.lastOffset < from) continue;
      if (filter.skip(b)) continue;
      for (const r of b.records()) if (r.offset >= from) out.push(r.value!.toString());
    }
    return out;
  }
}

describe('aborted transactions', () => {
  it('aborted transactions – read_committed skips an aborted transaction up to its ABORT marker and every control batch', () => {
    const log = new Log().data(1n, ['a1', 'a2']).data(1n, ['a3']).marker(1n, false).data(2n, ['c1']).marker(2n, true).data(-1n, ['plain'], false);
    expect(log.read([{ producerId: 1n, firstOffset: 0n }], true)).toEqual(['c1', 'plain']);
    // read_uncommitted: everything but the markers
    expect(log.read(null, false)).toEqual(['a1', 'a2', 'a3', 'c1', 'plain']);
  });

  it('aborted transactions – interleaved producers: only the aborting producer’s batches inside its range are dropped', () => {
    // offsets: 0 p1:x1 | 1 p2:y1 | 2 p1:x2 | 3 p2:y2 | 4 ABORT(p1) | 5 p1:x3 | 6 COMMIT(p2) | 7 p1:x4 | 8 COMMIT(p1)
    const log = new Log()
      .data(1n, ['x1'])
      .data(2n, ['y1'])
      .data(1n, ['x2'])
      .data(2n, ['y2'])
      .marker(1n, false)
      .data(1n, ['x3'])
      .marker(2n, true)
      .data(1n, ['x4'])
      .marker(1n, true);
    expect(log.read([{ producerId: 1n, firstOffset: 0n }], true)).toEqual(['y1', 'y2', 'x3', 'x4']);
  });

  it('aborted transactions – two aborted transactions of one producer, and another producer aborted in between', () => {
    // 0 p1:a | 1 ABORT(p1) | 2 p2:b | 3 p1:c | 4 p2:d | 5 ABORT(p2) | 6 ABORT(p1) | 7 p1:e | 8 COMMIT(p1)
    const log = new Log()
      .data(1n, ['a'])
      .marker(1n, false)
      .data(2n, ['b'])
      .data(1n, ['c'])
      .data(2n, ['d'])
      .marker(2n, false)
      .marker(1n, false)
      .data(1n, ['e'])
      .marker(1n, true);
    const aborted = [
      { producerId: 1n, firstOffset: 3n },
      { producerId: 2n, firstOffset: 2n },
      { producerId: 1n, firstOffset: 0n },
    ];
    expect(log.read(aborted, true)).toEqual(['e']);
  });

  it('aborted transactions – a fetch starting inside an aborted transaction (firstOffset below the fetch offset) still drops its batches', () => {
    const log = new Log().data(1n, ['a1']).data(1n, ['a2']).data(2n, ['c']).marker(1n, false).marker(2n, true);
    expect(log.read([{ producerId: 1n, firstOffset: 0n }], true, 1n)).toEqual(['c']);
  });

  it('aborted transactions – a producer’s committed transaction after its aborted one is returned; non-transactional batches of the same id are kept', () => {
    const log = new Log().data(1n, ['a']).marker(1n, false).data(1n, ['b']).marker(1n, true).data(3n, ['idempotent'], false);
    expect(log.read([{ producerId: 1n, firstOffset: 0n }], true)).toEqual(['b', 'idempotent']);
    // without the aborted list the batches are returned (the list is what tells aborted data apart)
    expect(log.read([], true)).toEqual(['a', 'b', 'idempotent']);
  });
});

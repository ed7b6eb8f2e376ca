import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { StateChangeRing } from './state-change-ring.js';

describe('state-change ring', () => {
  it('state-change ring – keeps only state-change records, numbered, newest up to its capacity', () => {
    const ring = new StateChangeRing(3);
    const log = pino({ base: { pid: 1 } }, ring);
    log.info({ topic: 't' }, 'not a state change');
    const scl = log.child({ logger: 'state.change.logger' });
    for (let i = 0; i < 5; i++) scl.info({ topic: 't', partition: i, leader: 2 }, 'elected leader');
    const all = ring.since(0);
    expect(all.records.map((r) => [r.seq, r.partition, r.msg])).toEqual([
      [3, 2, 'elected leader'],
      [4, 3, 'elected leader'],
      [5, 4, 'elected leader'],
    ]);
    expect(all.records[0]).not.toHaveProperty('logger');
    expect(all.next).toBe(5);
    expect(all.first).toBe(3);
    expect(ring.since(4).records.map((r) => r.seq)).toEqual([5]);
    expect(ring.since(5)).toEqual({ records: [], next: 5, first: 3, last: 5 });
    expect(ring.since(9).last).toBe(5);
    expect(ring.since(0, 2).next).toBe(4);
  });
});

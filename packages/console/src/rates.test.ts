import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sumBy, sumOf } from './prom-text.js';
import { counterIncrease, counterRate, pushPoint, ratesBetween, readCounters } from './rates.js';
import type { Point } from './state.js';

const text = (bytesIn: number, msgs: number, other = 0) => `# HELP kafka_server_brokertopicmetrics_bytesin_total Bytes in
# TYPE kafka_server_brokertopicmetrics_bytesin_total counter
kafka_server_brokertopicmetrics_bytesin_total{topic="t1"} ${bytesIn}
kafka_server_brokertopicmetrics_bytesin_total{topic="t2"} ${other}
kafka_server_brokertopicmetrics_messagesin_total{topic="t1"} ${msgs}
kafka_log_log_size{topic="t1",partition="0"} 1234
`;

describe('console rates', () => {
  it('console rates – Prometheus text: labels with escapes, special values, comments skipped', () => {
    const s = parsePrometheusText(`# TYPE x gauge\nx{a="q\\"uote",b="back\\\\slash"} 1.5\ny +Inf\nz NaN 1700000000\nbad{a=1} 2\nkafka_x 3e2\n`);
    expect(s[0]).toEqual({ name: 'x', labels: { a: 'q"uote', b: 'back\\slash' }, value: 1.5 });
    expect(s[1]!.value).toBe(Infinity);
    expect(Number.isNaN(s[2]!.value)).toBe(true);
    expect(s.map((x) => x.name)).toEqual(['x', 'y', 'z', 'kafka_x']);
    const m = parsePrometheusText(text(10, 2, 5));
    expect(sumOf(m, 'kafka_server_brokertopicmetrics_bytesin_total')).toBe(15);
    expect(sumOf(m, 'kafka_log_log_size', { partition: '0' })).toBe(1234);
    expect(sumOf(m, 'missing')).toBeNull();
    expect([...sumBy(m, 'kafka_server_brokertopicmetrics_bytesin_total', 'topic')]).toEqual([
      ['t1', 10],
      ['t2', 5],
    ]);
  });

  it('console rates – counter rate per second; a reset counts the new value as the increase', () => {
    expect(counterIncrease(100, 250)).toBe(150);
    expect(counterIncrease(100, 30)).toBe(30);
    expect(counterRate(1000, 3000, 2000)).toBe(1000);
    expect(counterRate(1000, 3000, 0)).toBe(0);
  });

  it('console rates – summed over endpoints; an endpoint without a previous reading contributes nothing', () => {
    const a0 = readCounters(parsePrometheusText(text(1000, 10)), 0);
    const a1 = readCounters(parsePrometheusText(text(3000, 30, 500)), 1000);
    const b1 = readCounters(parsePrometheusText(text(999, 9)), 1000);
    const r = ratesBetween([
      { prev: a0, next: a1 },
      { prev: undefined, next: b1 },
    ]);
    expect(r.total).toEqual({ bytesIn: 2500, bytesOut: 0, messagesIn: 20 });
    expect(r.topics.get('t1')).toEqual({ bytesIn: 2000, bytesOut: 0, messagesIn: 20 });
    expect(r.topics.get('t2')!.bytesIn).toBe(500);
  });

  it('console rates – series keep the newest points', () => {
    const s: Point[] = [];
    for (let i = 0; i < 5; i++) pushPoint(s, [i, i * 10], 3);
    expect(s).toEqual([
      [2, 20],
      [3, 30],
      [4, 40],
    ]);
  });
});

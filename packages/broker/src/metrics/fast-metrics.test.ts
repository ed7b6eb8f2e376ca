import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FastCounter, FastHistogram } from './fast-metrics.js';

describe('FastHistogram / FastCounter', () => {
  it("metrics – a bound histogram series exposes cumulative buckets, +Inf, sum and count in prom-client's text format", async () => {
    const reg = new Registry();
    const h = new FastHistogram('x_ms', 'X.', 'request', [1, 10, 100], reg);
    const s = h.child('Produce');
    for (const v of [0.5, 1, 5, 50, 500]) s.observe(v);
    const text = await reg.metrics();
    expect(text).toContain('# TYPE x_ms histogram');
    expect(text).toContain('x_ms_bucket{le="1",request="Produce"} 2');
    expect(text).toContain('x_ms_bucket{le="10",request="Produce"} 3');
    expect(text).toContain('x_ms_bucket{le="100",request="Produce"} 4');
    expect(text).toContain('x_ms_bucket{le="+Inf",request="Produce"} 5');
    expect(text).toContain('x_ms_sum{request="Produce"} 556.5');
    expect(text).toContain('x_ms_count{request="Produce"} 5');
    expect(h.child('Produce')).toBe(s);
  });

  it('metrics – counter series are keyed by all their label values', async () => {
    const reg = new Registry();
    const c = new FastCounter('y_total', 'Y.', ['request', 'error'], reg);
    c.child('Fetch', 'NONE').inc(3);
    c.child('Fetch', 'NONE').inc();
    c.child('Fetch', 'OFFSET_OUT_OF_RANGE').inc();
    const text = await reg.metrics();
    expect(text).toContain('# TYPE y_total counter');
    expect(text).toContain('y_total{request="Fetch",error="NONE"} 4');
    expect(text).toContain('y_total{request="Fetch",error="OFFSET_OUT_OF_RANGE"} 1');
  });
});

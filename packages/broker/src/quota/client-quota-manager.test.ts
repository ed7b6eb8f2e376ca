import { describe, expect, it } from 'vitest';
import { ClientQuotaManager, QuotaConfigs, RateSensor } from './client-quota-manager.js';

const W = { samples: 11, sampleMs: 1000 };

describe('client quotas', () => {
  it("client quotas – lookup follows Kafka's precedence: user/client > user/<default> client > user > <default> user … > client > <default> client", () => {
    const q = new QuotaConfigs();
    q.clients.set('<default>', { producer_byte_rate: '10' });
    expect(q.lookup('producer_byte_rate', 'ANONYMOUS', 'a')).toEqual({ bound: 10, key: 'client-id=a' });
    q.clients.set('a', { producer_byte_rate: '20' });
    expect(q.lookup('producer_byte_rate', 'ANONYMOUS', 'a')?.bound).toBe(20);
    expect(q.lookup('producer_byte_rate', 'ANONYMOUS', 'b')?.bound).toBe(10);
    q.users.set('<default>', { producer_byte_rate: '30' });
    expect(q.lookup('producer_byte_rate', 'ANONYMOUS', 'a')).toEqual({ bound: 30, key: 'user=ANONYMOUS' });
    q.users.set('ANONYMOUS/clients/a', { producer_byte_rate: '40' });
    expect(q.lookup('producer_byte_rate', 'ANONYMOUS', 'a')).toEqual({ bound: 40, key: 'user=ANONYMOUS,client-id=a' });
    expect(q.lookup('producer_byte_rate', 'ANONYMOUS', 'b')?.bound).toBe(30);
    expect(q.lookup('consumer_byte_rate', 'ANONYMOUS', 'a')).toBeNull();
  });

  it('client quotas – the token bucket holds burst = samples × window × quota; throttle time is the refill to zero (-tokens / quota)', () => {
    const q = new QuotaConfigs();
    const m = new ClientQuotaManager('producer_byte_rate', q, W);
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 1_000_000, 0)).toBe(0);
    q.clients.set('c', { producer_byte_rate: '1000' });
    // a fresh bucket is full: 11 × 1 s × 1000 B/s = 11 000 bytes go through unthrottled
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 11_000, 0)).toBe(0);
    // 500 more: tokens -500 → 500 / 1000 B/s = 500 ms
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 500, 0)).toBe(500);
    // 250 ms later 250 tokens came back (-250); 1000 more bytes → -1250 → 1250 ms
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 1000, 250)).toBe(1250);
    // unrecording gives the tokens back: -250 + 1000 refilled by 1500 ms = 1000 tokens ≥ the next 1000 bytes
    m.unrecord('ANONYMOUS', 'c', 1000, 250);
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 1000, 1500)).toBe(0);
    // the sampled rate still shows what was recorded: 11 500 + 1000 bytes over the 10 s minimum window
    expect(m.rate('ANONYMOUS', 'c', 1500)).toBeCloseTo(12_500 / 10.5, 0);
  });

  it('client quotas – a client sending as fast as it can is held to its quota over any 20 s once its burst is spent', () => {
    const q = new QuotaConfigs();
    q.clients.set('c', { producer_byte_rate: String(1 << 20) });
    const m = new ClientQuotaManager('producer_byte_rate', q, W);
    const sent: Array<[number, number]> = [];
    let firstThrottle = -1;
    // 64 kB requests back to back, 3 ms apart plus whatever throttle each answer carries
    for (let t = 0; t < 120_000;) {
      const throttle = m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 64_000, t);
      if (throttle > 0 && firstThrottle < 0) firstThrottle = t;
      sent.push([t, 64_000]);
      t += 3 + throttle;
    }
    expect(firstThrottle).toBeGreaterThan(0);
    for (let from = firstThrottle; from + 20_000 < 120_000; from += 3_700) {
      const bytes = sent.filter(([t]) => t >= from && t < from + 20_000).reduce((n, [, b]) => n + b, 0);
      const ratio = bytes / 20 / (1 << 20);
      expect(ratio).toBeGreaterThan(0.97);
      expect(ratio).toBeLessThan(1.03);
    }
  });

  it('client quotas – request_percentage throttles are capped at one window; maxValueInQuotaWindow is quota × (samples - 1) × window', () => {
    const q = new QuotaConfigs();
    q.clients.set('r', { request_percentage: '10', consumer_byte_rate: '1000' });
    const m = new ClientQuotaManager('request_percentage', q, W, W.sampleMs);
    // burst 11 × 10 = 110 %·s; 500 %·s (5 s of handler time) would need 39 s of refill: capped at 1 s
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'r', 500, 0)).toBe(1000);
    expect(new ClientQuotaManager('consumer_byte_rate', q, W).maxValueInQuotaWindow('ANONYMOUS', 'r')).toBe(10_000);
    expect(new ClientQuotaManager('consumer_byte_rate', q, W).maxValueInQuotaWindow('ANONYMOUS', 'other')).toBe(Infinity);
  });

  it('client quotas – samples older than the window are forgotten', () => {
    const s = new RateSensor(W);
    s.record(11_000, 0);
    expect(s.rate(0)).toBe(1100);
    s.record(1000, 20_000);
    expect(s.rate(20_000)).toBe(100);
  });
});

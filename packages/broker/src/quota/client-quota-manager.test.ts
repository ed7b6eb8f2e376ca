import { describe, expect, it } from 'vitest';
import { ClientQuotaManager, QuotaConfigs, RateSensor } from './client-quota-manager.js';

const W = { samples: 11, sampleMs: 1000 };

describe('client quotas', () => {
  it('client quotas – lookup follows Kafka\'s precedence: user/client > user/<default> client > user > <default> user … > client > <default> client', () => {
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

  it('client quotas – throttle time is (observed - bound) / bound * window; within the quota or without one it is 0', () => {
    const q = new QuotaConfigs();
    const m = new ClientQuotaManager('producer_byte_rate', q, W);
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 1_000_000, 0)).toBe(0);
    q.clients.set('c', { producer_byte_rate: '1000' });
    // 5000 bytes over the minimum window of 10 s: 500 B/s, under the bound
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 5000, 0)).toBe(0);
    // 20000 bytes: 2000 B/s over 10 s → (2000 - 1000) / 1000 * 10000
    expect(m.recordAndGetThrottleTimeMs('ANONYMOUS', 'c', 15000, 0)).toBe(10_000);
    m.unrecord('ANONYMOUS', 'c', 15000, 0);
    expect(m.rate('ANONYMOUS', 'c', 0)).toBe(500);
  });

  it('client quotas – samples older than the window are forgotten', () => {
    const s = new RateSensor(W);
    s.record(11_000, 0);
    expect(s.rate(0)).toBe(1100);
    s.record(1000, 20_000);
    expect(s.rate(20_000)).toBe(100);
  });
});

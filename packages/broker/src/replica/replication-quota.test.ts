import { describe, expect, it } from 'vitest';
import { ReplicationQuotaManager, UNLIMITED_RATE, parseThrottledReplicas } from './replication-quota.js';

describe('replication quota', () => {
  it('replication quota – throttled replicas: `*` is every partition, `p:b` entries only for this broker, empty is none', () => {
    expect(parseThrottledReplicas('*', 1)).toBe('all');
    expect(parseThrottledReplicas('0:1,1:2, 2:1', 1)).toEqual(new Set([0, 2]));
    expect(parseThrottledReplicas('0:2', 1)).toBeNull();
    expect(parseThrottledReplicas('', 1)).toBeNull();
    expect(parseThrottledReplicas(undefined, 1)).toBeNull();
  });

  it('replication quota – over the window rate the quota is exceeded, and recovers once old samples age out', () => {
    let now = 100_000;
    const q = new ReplicationQuotaManager('follower', { samples: 3, sampleMs: 1000 }, () => now);
    q.markThrottled('t', new Set([0]));
    expect(q.isThrottled('t', 0)).toBe(true);
    expect(q.isThrottled('t', 1)).toBe(false);
    expect(q.isThrottled('u', 0)).toBe(false);
    expect(q.isQuotaExceeded()).toBe(false); // unlimited
    q.updateQuota(1000);
    // the rate is measured over at least (samples − 1) windows: 1,500 bytes now = 750 B/s
    q.record(1500);
    expect(q.measuredRate()).toBeCloseTo(750);
    expect(q.isQuotaExceeded()).toBe(false);
    q.record(1000);
    expect(q.isQuotaExceeded()).toBe(true);
    now += 1500;
    expect(q.isQuotaExceeded()).toBe(true);
    now += 3000; // every sample is older than the window
    expect(q.measuredRate()).toBe(0);
    expect(q.isQuotaExceeded()).toBe(false);
    q.updateQuota(UNLIMITED_RATE);
    q.record(10_000_000);
    expect(q.isQuotaExceeded()).toBe(false);
    q.removeThrottle('t');
    expect(q.isThrottled('t', 0)).toBe(false);
  });

  it('replication quota – a steady sender held back whenever over quota averages the limit', () => {
    let now = 0;
    const q = new ReplicationQuotaManager('leader', { samples: 2, sampleMs: 1000 }, () => now);
    q.updateQuota(100_000);
    let sent = 0;
    // every 10 ms: send 4 KiB unless over quota
    for (; now < 30_000; now += 10) {
      if (!q.isQuotaExceeded()) {
        q.record(4096);
        sent += 4096;
      }
    }
    const rate = (sent * 1000) / 30_000;
    expect(rate / 100_000).toBeGreaterThan(0.9);
    expect(rate / 100_000).toBeLessThan(1.1);
  });
});

import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../api/api-handler.js';
import { userPrincipal } from '../security/kafka-principal.js';
import { ClientQuotas, principalOf } from './throttle.js';

const ctx = (principal?: ReturnType<typeof userPrincipal>): RequestContext => ({
  conn: { id: 1, remote: 'r', listener: 'L', ...(principal ? { principal } : {}) },
  clientId: 'app',
  listener: 'L',
});

describe('quota principal', () => {
  it("quota principal – the user quota entity is the connection's principal name (SASL user), ANONYMOUS without one", () => {
    expect(principalOf(ctx())).toBe('ANONYMOUS');
    expect(principalOf(ctx(userPrincipal('alice')))).toBe('alice');
    const quotas = new ClientQuotas({ samples: 11, sampleMs: 1000 });
    quotas.configs.users.set('alice', { request_percentage: '0.001' });
    // alice's request quota applies to alice's connections only
    expect(quotas.requestThrottleTimeMs(ctx(userPrincipal('alice')), 1000)).toBeGreaterThan(0);
    expect(quotas.requestThrottleTimeMs(ctx(), 1000)).toBe(0);
  });
});

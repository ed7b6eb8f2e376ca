import type { RequestContext } from '../server/request-handler.js';
import { ANONYMOUS_USER, ClientQuotaManager, QuotaConfigs, type QuotaWindow } from './client-quota-manager.js';

/** The broker's client quota managers and the quota entities they read. */
export class ClientQuotas {
  readonly configs = new QuotaConfigs();
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;

  constructor(window: QuotaWindow) {
    this.produce = new ClientQuotaManager('producer_byte_rate', this.configs, window);
    this.fetch = new ClientQuotaManager('consumer_byte_rate', this.configs, window);
  }
}

/** Without authentication every connection's principal is ANONYMOUS. */
export function principalOf(_ctx: RequestContext): string {
  return ANONYMOUS_USER;
}

/**
 * Applies a throttle time the way Kafka does per request version: from `kip219Version` on, the
 * response goes out at once carrying throttle_time_ms and the channel is muted for that long
 * (the client backs off too); older versions get their response delayed by the throttle time.
 */
export async function throttle(ctx: RequestContext, apiVersion: number, kip219Version: number, throttleTimeMs: number): Promise<void> {
  if (throttleTimeMs <= 0) return;
  if (apiVersion >= kip219Version) ctx.conn.mutedUntilMs = Math.max(ctx.conn.mutedUntilMs ?? 0, Date.now() + throttleTimeMs);
  else await new Promise((r) => setTimeout(r, throttleTimeMs));
}

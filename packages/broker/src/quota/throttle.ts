import type { RequestContext, RequestThrottler } from '../api/api-handler.js';
import { ANONYMOUS_USER, ClientQuotaManager, QuotaConfigs, type QuotaWindow } from './client-quota-manager.js';

/** Kafka's ClientRequestQuotaManager.NanosToPercentagePerSecond, per ms: 1 ms of handler time = 0.1 %·s. */
const MS_TO_PERCENTAGE_SECONDS = 100 / 1000;

/** The broker's client quota managers and the quota entities they read. */
export class ClientQuotas implements RequestThrottler {
  readonly configs = new QuotaConfigs();
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  /** request_percentage: handler time as a percentage of one thread, throttles capped at one window. */
  readonly request: ClientQuotaManager;

  constructor(window: QuotaWindow) {
    this.produce = new ClientQuotaManager('producer_byte_rate', this.configs, window);
    this.fetch = new ClientQuotaManager('consumer_byte_rate', this.configs, window);
    this.request = new ClientQuotaManager('request_percentage', this.configs, window, window.sampleMs);
  }

  /**
   * Kafka's quotas.request.maybeRecordAndGetThrottleTimeMs: the request's handler time (what it
   * kept this broker's event loop and I/O busy, purgatory waits excluded) is recorded against the
   * client's request_percentage; when over, the client is throttled (its channel muted, as every
   * Kafka 2.0+ broker does) and the response carries the larger throttle time. Requests from other
   * brokers (follower fetches) are exempt, as Kafka's cluster actions are.
   */
  requestThrottleTimeMs(ctx: RequestContext, handlerMs: number, now = Date.now()): number {
    const user = principalOf(ctx);
    const clientId = ctx.clientId ?? '';
    if (!this.request.hasQuota(user, clientId)) return 0;
    const t = this.request.recordAndGetThrottleTimeMs(user, clientId, handlerMs * MS_TO_PERCENTAGE_SECONDS, now);
    if (t > 0) ctx.conn.mutedUntilMs = Math.max(ctx.conn.mutedUntilMs ?? 0, now + t);
    return t;
  }
}

/**
 * The user whose quotas apply: the connection's principal name (SASL's authenticated user, the
 * TLS certificate's mapped name), ANONYMOUS without authentication (Kafka's quota entity `user`).
 */
export function principalOf(ctx: RequestContext): string {
  return ctx.conn.principal?.name ?? ANONYMOUS_USER;
}

/**
 * Applies a throttle time the way Kafka does per request version: from `kip219Version` on, the
 * response goes out at once carrying throttle_time_ms and the channel is muted for that long
 * (the client may back off too: the broker's mute and the client's wait start together, so they
 * overlap rather than add up); older versions get their response delayed by the throttle time.
 */
export async function throttle(ctx: RequestContext, apiVersion: number, kip219Version: number, throttleTimeMs: number): Promise<void> {
  if (throttleTimeMs <= 0) return;
  if (apiVersion >= kip219Version) ctx.conn.mutedUntilMs = Math.max(ctx.conn.mutedUntilMs ?? 0, Date.now() + throttleTimeMs);
  else await new Promise((r) => setTimeout(r, throttleTimeMs));
}

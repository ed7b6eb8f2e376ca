/**
 * Client quotas (Kafka's ClientQuotaManager for the produce and fetch byte rates and
 * ClientRequestQuotaManager for request_percentage): quotas come from
 * /config/users/<user>[/clients/<client-id>] and /config/clients/<client-id> (with `<default>`
 * entities), looked up in Kafka's precedence order.
 *
 * Throttling uses Kafka's TokenBucket (the stat of KIP-599's controller mutation quota) rather than
 * the sampled Rate Kafka's byte-rate quotas use: the bucket refills at the quota and holds at most
 * `quota.window.num` × `quota.window.size.seconds` × quota; a request that takes it below zero is
 * throttled for the time the refill needs to bring it back to zero (-tokens / quota). The sampled
 * Rate lets a client that sends as fast as it can burst ~10 × its quota each time the sample that
 * holds its last burst expires, then holds it back until that sample expires (Kafka's TokenBucket
 * javadoc describes the same flaw), so over any 20 s its rate swings between ~0.5× and ~1×; with
 * the bucket it is the quota from the first throttle on. The sampled rate is still measured for
 * `rate()` (what the client is observed doing over the window).
 */

/** Kafka's ConfigEntityName.Default. */
export const DEFAULT_ENTITY = '<default>';
/** The principal of unauthenticated connections (Samsa has no SASL/SSL authentication yet). */
export const ANONYMOUS_USER = 'ANONYMOUS';

export const QUOTA_CONFIG_NAMES = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage'] as const;
export type QuotaConfigName = (typeof QUOTA_CONFIG_NAMES)[number];

export interface QuotaWindow {
  /** quota.window.num (Kafka: 11). */
  samples: number;
  /** quota.window.size.seconds in ms (Kafka: 1000). */
  sampleMs: number;
}

/** Kafka's SampledStat Rate: sums of recorded values in rolling samples. */
export class RateSensor {
  private readonly samples: Array<{ start: number; value: number }> = [];

  constructor(private readonly w: QuotaWindow) {}

  record(value: number, now: number): void {
    this.purge(now);
    const last = this.samples[this.samples.length - 1];
    if (last && now < last.start + this.w.sampleMs) last.value += value;
    else this.samples.push({ start: now - ((now - (last?.start ?? now)) % this.w.sampleMs), value });
    while (this.samples.length > this.w.samples) this.samples.shift();
  }

  /** Kafka's Rate.windowSize: time since the oldest sample, at least (samples - 1) full windows. */
  windowMs(now: number): number {
    this.purge(now);
    let elapsed = now - (this.samples[0]?.start ?? now);
    const full = Math.floor(elapsed / this.w.sampleMs);
    if (full < this.w.samples - 1) elapsed += (this.w.samples - 1 - full) * this.w.sampleMs;
    return elapsed;
  }

  /** Units per second over the window. */
  rate(now: number): number {
    const total = this.samples.reduce((n, s) => n + s.value, 0);
    return (total * 1000) / this.windowMs(now);
  }

  private purge(now: number): void {
    const horizon = now - this.w.samples * this.w.sampleMs;
    while (this.samples.length > 0 && this.samples[0]!.start + this.w.sampleMs <= horizon) this.samples.shift();
  }
}

/**
 * Kafka's TokenBucket stat: refills at `bound` units per second up to a burst of
 * samples × window × bound; recording takes tokens (an unrecord gives them back).
 * A fresh bucket is full.
 */
export class TokenBucket {
  private tokens = Number.POSITIVE_INFINITY;
  private lastMs = 0;

  constructor(private readonly w: QuotaWindow) {}

  burst(bound: number): number {
    return ((this.w.samples * this.w.sampleMs) / 1000) * bound;
  }

  /** Tokens left at `now` (negative: the time to refill to zero is what the client is throttled). */
  measure(bound: number, now: number): number {
    this.refill(bound, now);
    return this.tokens;
  }

  record(value: number, bound: number, now: number): void {
    this.refill(bound, now);
    this.tokens = Math.min(this.burst(bound), this.tokens - value);
  }

  private refill(bound: number, now: number): void {
    const elapsed = Math.max(0, now - this.lastMs);
    this.tokens = Math.min(this.burst(bound), this.tokens + (bound * elapsed) / 1000);
    this.lastMs = Math.max(this.lastMs, now);
  }
}

/** The dynamic quota entities this broker knows (kept up to date by the config change handler). */
export class QuotaConfigs {
  /** /config/clients/<id> */
  readonly clients = new Map<string, Readonly<Record<string, string>>>();
  /** /config/users/<user> and /config/users/<user>/clients/<id> (key `user` or `user/clients/id`). */
  readonly users = new Map<string, Readonly<Record<string, string>>>();

  /**
   * The quota of (user, client-id) for `name` in Kafka's order (DefaultQuotaCallback): user+client,
   * user+default client, user, default user+client, default user+default client, default user,
   * client, default client. Returns the bound and the metric tags (which entity it is counted on).
   */
  lookup(name: QuotaConfigName, user: string, clientId: string): { bound: number; key: string } | null {
    // the usual case, no quota configured anywhere: no candidate keys built per request
    if (this.users.size === 0 && this.clients.size === 0) return null;
    const D = DEFAULT_ENTITY;
    const candidates: Array<[Map<string, Readonly<Record<string, string>>>, string, string]> = [
      [this.users, `${user}/clients/${clientId}`, `user=${user},client-id=${clientId}`],
      [this.users, `${user}/clients/${D}`, `user=${user},client-id=${clientId}`],
      [this.users, user, `user=${user}`],
      [this.users, `${D}/clients/${clientId}`, `user=${user},client-id=${clientId}`],
      [this.users, `${D}/clients/${D}`, `user=${user},client-id=${clientId}`],
      [this.users, D, `user=${user}`],
      [this.clients, clientId, `client-id=${clientId}`],
      [this.clients, D, `client-id=${clientId}`],
    ];
    for (const [map, entity, key] of candidates) {
      const v = map.get(entity)?.[name];
      if (v === undefined) continue;
      const bound = Number(v);
      if (Number.isFinite(bound) && bound > 0) return { bound, key };
    }
    return null;
  }
}

interface QuotaSensor {
  bucket: TokenBucket;
  rate: RateSensor;
}

/**
 * One quota type (produce bytes, fetch bytes or request time): a token bucket and a sampled rate
 * per quota entity, and the throttle times they give.
 */
export class ClientQuotaManager {
  private readonly sensors = new Map<string, QuotaSensor>();

  /**
   * @param maxThrottleTimeMs the longest throttle (Kafka caps the request quota's at one window,
   *   quota.window.size.seconds; byte rates are not capped)
   */
  constructor(
    readonly name: QuotaConfigName,
    private readonly configs: QuotaConfigs,
    private readonly window: QuotaWindow,
    private readonly maxThrottleTimeMs = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Records `value` (bytes, or for request_percentage the request time in percent-seconds) for the
   * client and returns how long it must be throttled: 0 within its quota or without one, else the
   * time the bucket needs to refill to zero at the quota's rate.
   */
  recordAndGetThrottleTimeMs(user: string, clientId: string, value: number, now = Date.now()): number {
    const q = this.configs.lookup(this.name, user, clientId);
    if (!q) return 0;
    const sensor = this.sensor(q.key);
    sensor.rate.record(value, now);
    sensor.bucket.record(value, q.bound, now);
    const tokens = sensor.bucket.measure(q.bound, now);
    if (tokens >= 0) return 0;
    return Math.min(this.maxThrottleTimeMs, Math.round((-tokens / q.bound) * 1000));
  }

  /** Takes back a recorded value (a throttled fetch returns no data: Kafka's unrecordQuotaSensor). */
  unrecord(user: string, clientId: string, value: number, now = Date.now()): void {
    const q = this.configs.lookup(this.name, user, clientId);
    if (!q) return;
    const sensor = this.sensor(q.key);
    sensor.rate.record(-value, now);
    sensor.bucket.record(-value, q.bound, now);
  }

  /**
   * The largest value one request may record without being throttled for it alone (Kafka's
   * getMaxValueInQuotaWindow, which bounds a fetch's size): quota × (samples - 1) × window.
   */
  maxValueInQuotaWindow(user: string, clientId: string): number {
    const q = this.configs.lookup(this.name, user, clientId);
    return q ? (q.bound * (this.window.samples - 1) * this.window.sampleMs) / 1000 : Number.POSITIVE_INFINITY;
  }

  /** The sampled rate of the client's quota entity (units/s), or null without a quota (tests, metrics). */
  rate(user: string, clientId: string, now = Date.now()): number | null {
    const q = this.configs.lookup(this.name, user, clientId);
    return q ? this.sensor(q.key).rate.rate(now) : null;
  }

  /** Whether (user, client-id) has a quota of this type (request-time measuring is skipped without). */
  hasQuota(user: string, clientId: string): boolean {
    return this.configs.lookup(this.name, user, clientId) !== null;
  }

  private sensor(key: string): QuotaSensor {
    let s = this.sensors.get(key);
    if (!s) {
      s = { bucket: new TokenBucket(this.window), rate: new RateSensor(this.window) };
      this.sensors.set(key, s);
    }
    return s;
  }
}

/**
 * Client quotas (Kafka's ClientQuotaManager for the produce and fetch byte rates): quotas come from
 * /config/users/<user>[/clients/<client-id>] and /config/clients/<client-id> (with `<default>`
 * entities), looked up in Kafka's precedence order; each quota entity's byte rate is measured over
 * `quota.window.num` windows of `quota.window.size.seconds`, and a request that takes it above
 * the bound is throttled for (observed - bound) / bound * window.
 */

/** Kafka's ConfigEntityName.Default. */
export const DEFAULT_ENTITY = '<default>';
/** The principal of unauthenticated connections (Samsa has no SASL/SSL authentication yet). */
export const ANONYMOUS_USER = 'ANONYMOUS';

export type QuotaConfigName = 'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage';

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

  /** Bytes per second over the window. */
  rate(now: number): number {
    const total = this.samples.reduce((n, s) => n + s.value, 0);
    return (total * 1000) / this.windowMs(now);
  }

  private purge(now: number): void {
    const horizon = now - this.w.samples * this.w.sampleMs;
    while (this.samples.length > 0 && this.samples[0]!.start + this.w.sampleMs <= horizon) this.samples.shift();
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

/** One quota type (produce or fetch bytes): sensors per quota entity, throttle times. */
export class ClientQuotaManager {
  private readonly sensors = new Map<string, RateSensor>();

  constructor(
    readonly name: QuotaConfigName,
    private readonly configs: QuotaConfigs,
    private readonly window: QuotaWindow,
  ) {}

  /**
   * Records `bytes` for the client and returns how long it must be throttled (0 when within its
   * quota or without one): Kafka's (observed - bound) / bound * window size.
   */
  recordAndGetThrottleTimeMs(user: string, clientId: string, bytes: number, now = Date.now()): number {
    const q = this.configs.lookup(this.name, user, clientId);
    if (!q) return 0;
    const sensor = this.sensor(q.key);
    sensor.record(bytes, now);
    const observed = sensor.rate(now);
    if (observed <= q.bound) return 0;
    return Math.round(((observed - q.bound) / q.bound) * sensor.windowMs(now));
  }

  /** Takes back a recorded value (a throttled fetch returns no data: Kafka's unrecordQuotaSensor). */
  unrecord(user: string, clientId: string, bytes: number, now = Date.now()): void {
    const q = this.configs.lookup(this.name, user, clientId);
    if (q) this.sensor(q.key).record(-bytes, now);
  }

  /** The measured rate of the client's quota entity (bytes/s), or null without a quota (tests, metrics). */
  rate(user: string, clientId: string, now = Date.now()): number | null {
    const q = this.configs.lookup(this.name, user, clientId);
    return q ? this.sensor(q.key).rate(now) : null;
  }

  private sensor(key: string): RateSensor {
    let s = this.sensors.get(key);
    if (!s) {
      s = new RateSensor(this.window);
      this.sensors.set(key, s);
    }
    return s;
  }
}

/**
 * Kafka's ReplicationQuotaManager: one for the leader side (bytes this broker sends to throttled
 * followers) and one for the follower side (bytes it fetches for throttled partitions). A partition
 * is throttled when the topic's `leader.replication.throttled.replicas` /
 * `follower.replication.throttled.replicas` names it on this broker (or is `*`); the rate is the
 * broker's `leader.replication.throttled.rate` / `follower.replication.throttled.rate` (bytes/s),
 * measured over `replication.quota.window.num` samples of `replication.quota.window.size.seconds`.
 * Over quota, throttled partitions that are not in sync are left out of fetch responses (leader)
 * and fetch requests (follower) until the rate drops again.
 */

/** Kafka's "unlimited" (Long.MAX_VALUE) rate: no throttle. */
export const UNLIMITED_RATE = Number.MAX_SAFE_INTEGER;

export interface QuotaWindow {
  /** replication.quota.window.num */
  samples: number;
  /** replication.quota.window.size.seconds, in ms */
  sampleMs: number;
}

interface Sample {
  start: number;
  bytes: number;
}

export class ReplicationQuotaManager {
  private rate = UNLIMITED_RATE;
  /** topic → throttled partitions on this broker ('all' for `*`). */
  private readonly throttled = new Map<string, Set<number> | 'all'>();
  private readonly samples: Sample[] = [];

  constructor(
    readonly side: 'leader' | 'follower',
    private readonly window: QuotaWindow,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bytes per second; UNLIMITED_RATE (or anything not finite) lifts the throttle. */
  updateQuota(bytesPerSecond: number): void {
    this.rate = Number.isFinite(bytesPerSecond) && bytesPerSecond >= 0 ? bytesPerSecond : UNLIMITED_RATE;
  }

  get quota(): number {
    return this.rate;
  }

  markThrottled(topic: string, partitions: Set<number> | 'all'): void {
    this.throttled.set(topic, partitions);
  }

  removeThrottle(topic: string): void {
    this.throttled.delete(topic);
  }

  isThrottled(topic: string, partition: number): boolean {
    const t = this.throttled.get(topic);
    return t !== undefined && (t === 'all' || t.has(partition));
  }

  /** Kafka's Rate over the sample window: bytes in the kept samples / elapsed window time. */
  measuredRate(): number {
    const now = this.now();
    this.expire(now);
    if (this.samples.length === 0) return 0;
    const total = this.samples.reduce((n, s) => n + s.bytes, 0);
    // as Kafka's SampledStat: elapsed since the oldest sample, at least (samples − 1) full windows
    const elapsed = Math.max(now - this.samples[0]!.start, (this.window.samples - 1) * this.window.sampleMs);
    return (total * 1000) / Math.max(1, elapsed);
  }

  isQuotaExceeded(): boolean {
    if (this.rate >= UNLIMITED_RATE) return false;
    return this.measuredRate() > this.rate;
  }

  /** Bytes of throttled partitions sent (leader) or fetched (follower). */
  record(bytes: number): void {
    if (bytes <= 0) return;
    const now = this.now();
    this.expire(now);
    const last = this.samples[this.samples.length - 1];
    if (last && now - last.start < this.window.sampleMs) last.bytes += bytes;
    else this.samples.push({ start: now, bytes });
  }

  private expire(now: number): void {
    const horizon = now - this.window.samples * this.window.sampleMs;
    while (this.samples.length > 0 && this.samples[0]!.start + this.window.sampleMs <= horizon) this.samples.shift();
  }
}

/**
 * Kafka's parseThrottledPartitions: `*` is every partition; otherwise the partitions of
 * `partition:broker` entries for this broker. Empty or unset: none.
 */
export function parseThrottledReplicas(value: string | undefined, brokerId: number): Set<number> | 'all' | null {
  const v = (value ?? '').trim();
  if (v === '') return null;
  if (v === '*') return 'all';
  const out = new Set<number>();
  for (const entry of v.split(',')) {
    const [p, b] = entry.trim().split(':');
    if (Number(b) === brokerId && p !== undefined && /^\d+$/.test(p.trim())) out.add(Number(p));
  }
  return out.size > 0 ? out : null;
}

/**
 * Kafka's Throttler for log.cleaner.io.max.bytes.per.second: bytes are counted per ~300 ms period
 * and, when a period ran faster than the allowed rate, the caller waits until it would not have.
 * Shared by all cleaning loops. Also gives the event loop a turn now and then, since cleaning a
 * batch is synchronous work and reads that hit the scanner's chunk resolve without I/O.
 */
const CHECK_INTERVAL_MS = 300;
const YIELD_EVERY_MS = 10;

export class Throttler {
  private periodStart: number;
  private observed = 0;
  private lastYield: number;

  constructor(
    private readonly desiredRatePerSec: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.periodStart = now();
    this.lastYield = performance.now();
  }

  /** Counts `bytes` and waits if the rate is over the limit (or briefly yields after a busy stretch). */
  async maybeThrottle(bytes: number): Promise<void> {
    if (performance.now() - this.lastYield >= YIELD_EVERY_MS) {
      await new Promise<void>((r) => setImmediate(r));
      this.lastYield = performance.now();
    }
    const now = this.now();
    if (!Number.isFinite(this.desiredRatePerSec) || this.desiredRatePerSec >= Number.MAX_VALUE) return;
    this.observed += bytes;
    const elapsed = now - this.periodStart;
    if (elapsed < CHECK_INTERVAL_MS) return;
    const rate = (this.observed * 1000) / Math.max(1, elapsed);
    if (rate > this.desiredRatePerSec) {
      const sleepMs = Math.round((this.observed * 1000) / this.desiredRatePerSec - elapsed);
      if (sleepMs > 0) await new Promise<void>((r) => setTimeout(r, sleepMs).unref());
    }
    this.periodStart = this.now();
    this.observed = 0;
  }
}

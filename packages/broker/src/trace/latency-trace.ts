import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import type { Logger } from 'pino';

/**
 * Opt-in latency tracing (SAMSA_TRACE_LATENCY=1): code on the request path records how long named
 * stages took (`latencyTrace?.record('produce.append', ms)`), and every SAMSA_TRACE_LATENCY_INTERVAL_MS
 * (5 s) the broker logs one 'latency trace' line with count/p50/p99/max per stage and the event
 * loop delay, then starts over. Off (the default), `latencyTrace` is undefined: a caller pays one
 * comparison, and takes timestamps only behind it.
 */
export class LatencyTrace {
  private samples = new Map<string, number[]>();
  private loopDelay: IntervalHistogram | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** Milliseconds since an arbitrary origin (performance.now()). */
  now(): number {
    return performance.now();
  }

  record(stage: string, ms: number): void {
    let s = this.samples.get(stage);
    if (!s) {
      s = [];
      this.samples.set(stage, s);
    }
    s.push(ms);
  }

  /** Records now − `since` under `stage`. */
  since(stage: string, since: number): void {
    this.record(stage, performance.now() - since);
  }

  /** Per stage: count, p50, p99, max (ms); clears the samples. */
  snapshot(): Record<string, { n: number; p50: number; p99: number; max: number }> {
    const out: Record<string, { n: number; p50: number; p99: number; max: number }> = {};
    for (const [stage, xs] of [...this.samples].sort((a, b) => a[0].localeCompare(b[0]))) {
      if (xs.length === 0) continue;
      const s = Float64Array.from(xs).sort();
      const at = (q: number) => round(s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!);
      out[stage] = { n: s.length, p50: at(0.5), p99: at(0.99), max: round(s[s.length - 1]!) };
    }
    this.samples = new Map();
    return out;
  }

  start(logger: Logger, intervalMs: number): void {
    if (this.timer) return;
    this.loopDelay = monitorEventLoopDelay({ resolution: 1 });
    this.loopDelay.enable();
    this.timer = setInterval(() => {
      const d = this.loopDelay!;
      const eventLoopDelay = { p50: round(d.percentile(50) / 1e6), p99: round(d.percentile(99) / 1e6), max: round(d.max / 1e6) };
      d.reset();
      logger.info({ stages: this.snapshot(), eventLoopDelay }, 'latency trace');
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.loopDelay?.disable();
  }
}

const round = (x: number) => Math.round(x * 100) / 100;

/** The process-wide tracer, or undefined when SAMSA_TRACE_LATENCY is not 1. */
export const latencyTrace: LatencyTrace | undefined = process.env['SAMSA_TRACE_LATENCY'] === '1' ? new LatencyTrace() : undefined;

/** How often the tracer logs (SAMSA_TRACE_LATENCY_INTERVAL_MS, default 5000). */
export const latencyTraceIntervalMs = Math.max(100, Number(process.env['SAMSA_TRACE_LATENCY_INTERVAL_MS'] ?? 5000) || 5000);

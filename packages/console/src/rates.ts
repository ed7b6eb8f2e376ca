/**
 * Per-second rates from Prometheus counters scraped at successive polls (what PromQL's `rate()`
 * does over two samples): a counter that went down was reset (broker restarted), so its whole new
 * value counts as the increase.
 */
import { sumBy, type Sample } from './prom-text.js';
import type { Point } from './state.js';

export const TOPIC_COUNTERS = {
  bytesIn: 'kafka_server_brokertopicmetrics_bytesin_total',
  bytesOut: 'kafka_server_brokertopicmetrics_bytesout_total',
  messagesIn: 'kafka_server_brokertopicmetrics_messagesin_total',
} as const;
export type CounterName = keyof typeof TOPIC_COUNTERS;
const COUNTERS = Object.keys(TOPIC_COUNTERS) as CounterName[];

/** Increase of a counter between two readings, counting a reset as a restart from 0. */
export function counterIncrease(prev: number, next: number): number {
  return next >= prev ? next - prev : next;
}

/** Per-second rate between two readings taken `ms` apart (0 when no time passed). */
export function counterRate(prev: number, next: number, ms: number): number {
  return ms > 0 ? (counterIncrease(prev, next) * 1000) / ms : 0;
}

/** One endpoint's counters at one scrape: counter → topic → value. */
export type CounterReading = { at: number; values: Record<CounterName, Map<string, number>> };

/** The per-topic counters of one scrape. */
export function readCounters(samples: readonly Sample[], at: number): CounterReading {
  const values = {} as Record<CounterName, Map<string, number>>;
  for (const c of COUNTERS) values[c] = sumBy(samples, TOPIC_COUNTERS[c], 'topic');
  return { at, values };
}

export interface RateSet {
  total: Record<CounterName, number>;
  topics: Map<string, Record<CounterName, number>>;
}

const zero = (): Record<CounterName, number> => ({ bytesIn: 0, bytesOut: 0, messagesIn: 0 });

/**
 * Rates of every endpoint between its previous and its current reading, summed. An endpoint
 * without a previous reading (first scrape, or it came back) contributes nothing yet; a topic new
 * since the previous reading counts from 0.
 */
export function ratesBetween(pairs: ReadonlyArray<{ prev: CounterReading | undefined; next: CounterReading }>): RateSet {
  const total = zero();
  const topics = new Map<string, Record<CounterName, number>>();
  for (const { prev, next } of pairs) {
    if (!prev) continue;
    const ms = next.at - prev.at;
    for (const c of COUNTERS) {
      for (const [topic, v] of next.values[c]) {
        const r = counterRate(prev.values[c].get(topic) ?? 0, v, ms);
        total[c] += r;
        const t = topics.get(topic) ?? zero();
        t[c] += r;
        topics.set(topic, t);
      }
    }
  }
  return { total, topics };
}

/** Appends a point and keeps the newest `max`. */
export function pushPoint(series: Point[], point: Point, max: number): void {
  series.push(point);
  if (series.length > max) series.splice(0, series.length - max);
}

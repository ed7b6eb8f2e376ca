import type { Metric, Registry } from 'prom-client';

/** One label value's series: observe() is a bucket search and three additions. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly upper: readonly number[]) {
    this.counts = new Float64Array(upper.length);
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const u = this.upper;
    for (let i = 0; i < u.length; i++) {
      if (v <= u[i]!) {
        this.counts[i]!++;
        return;
      }
    }
    // above the last bound: only +Inf (the count) holds it
  }
}

/**
 * A Prometheus histogram with one label, for the request path: prom-client's Histogram hashes its
 * label set on every observe (about 1-2 µs), and a request records seven of them. This one binds a
 * series per label value once and keeps plain bucket counts, turned into the cumulative `_bucket`
 * / `_sum` / `_count` exposition at scrape time. It registers with a prom-client Registry as a
 * metric of type histogram, so the text format is prom-client's own.
 */
export class FastHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelName: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of one label value (create-once, keep the result). */
  child(labelValue: string): HistogramSeries {
    let s = this.series.get(labelValue);
    if (!s) {
      s = new HistogramSeries(this.buckets);
      this.series.set(labelValue, s);
    }
    return s;
  }

  reset(): void {
    this.series.clear();
  }

  get(): {
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }>;
  } {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const [lv, s] of this.series) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, [this.labelName]: lv }, value: acc });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', [this.labelName]: lv }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: { [this.labelName]: lv }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { [this.labelName]: lv }, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** One counter series. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Record<string, string>) {}

  inc(n = 1): void {
    this.value += n;
  }
}

/** A Prometheus counter whose series are bound once (see FastHistogram), for the request path. */
export class FastCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, CounterSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values, in `labelNames` order (create-once, keep the result). */
  child(...labelValues: string[]): CounterSeries {
    const key = labelValues.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = new CounterSeries(Object.fromEntries(this.labelNames.map((n, i) => [n, labelValues[i] ?? ''])));
      this.series.set(key, s);
    }
    return s;
  }

  reset(): void {
    this.series.clear();
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: Array<{ labels: Record<string, string>; value: number }> } {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })),
    };
  }
}

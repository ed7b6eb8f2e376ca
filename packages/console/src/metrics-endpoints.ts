/**
 * Where the brokers' metrics endpoints are. Either given (`--metrics-urls`), or discovered through
 * the admin client: DescribeConfigs of each live broker for `metrics.port` and `metrics.host`
 * (Samsa's broker configs), on the host the broker advertises when metrics.host is empty or a
 * wildcard. Brokers with metrics.port -1 / 0 have no endpoint.
 */
import { ConfigResourceType, type Admin, type BrokerNode } from '@samsa/client';

export interface MetricsEndpoint {
  /** Base URL, e.g. `http://127.0.0.1:9404` (GET <url>/metrics). */
  url: string;
  /** The broker it belongs to; null for a --metrics-urls entry (not known). */
  brokerId: number | null;
}

/** `host:port`, `http://host:port` or `http://host:port/metrics` → `http://host:port`. */
export function normalizeMetricsUrl(raw: string): string {
  let s = raw.trim();
  if (!/^https?:\/\//.test(s)) s = `http://${s}`;
  const u = new URL(s);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/metrics$/, '');
  return `${u.protocol}//${u.host}${path}`;
}

/** The --metrics-urls list (comma-separated). */
export function parseMetricsUrls(list: string): MetricsEndpoint[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => ({ url: normalizeMetricsUrl(s), brokerId: null }));
}

/** The endpoint a broker's metrics.port / metrics.host describe (null when disabled). */
export function endpointFromConfig(broker: BrokerNode, port: string | null | undefined, host: string | null | undefined): MetricsEndpoint | null {
  const p = Number(port ?? '-1');
  if (!Number.isInteger(p) || p <= 0) return null;
  const h = host && host !== '0.0.0.0' && host !== '::' ? host : broker.host;
  return { url: `http://${h.includes(':') ? `[${h}]` : h}:${p}`, brokerId: broker.nodeId };
}

/** Discovers the endpoints of `brokers` through DescribeConfigs (brokers that fail are left out). */
export async function discoverMetricsEndpoints(admin: Admin, brokers: readonly BrokerNode[], timeoutMs: number): Promise<MetricsEndpoint[]> {
  const results = await Promise.allSettled(
    brokers.map(async (b) => {
      const [res] = await admin.describeConfigs([{ type: ConfigResourceType.Broker, name: String(b.nodeId), configNames: ['metrics.port', 'metrics.host'] }], {
        timeoutMs,
      });
      const get = (n: string) => res?.entries.find((e) => e.name === n)?.value;
      return endpointFromConfig(b, get('metrics.port'), get('metrics.host'));
    }),
  );
  const out: MetricsEndpoint[] = [];
  for (const r of results) if (r.status === 'fulfilled' && r.value) out.push(r.value);
  return out.sort((a, b) => (a.brokerId ?? 0) - (b.brokerId ?? 0));
}

/** GET <url>/metrics with a deadline; rejects on HTTP errors. */
export async function scrape(endpoint: MetricsEndpoint, timeoutMs: number): Promise<string> {
  const res = await fetch(`${endpoint.url}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`GET ${endpoint.url}/metrics answered ${res.status}`);
  return res.text();
}

export interface StateChangeAnswer {
  records: Array<{ seq: number; time: number; msg: string; [field: string]: unknown }>;
  next: number;
  last: number;
}

/** GET <url>/state-change?since=N; null when the endpoint does not keep the stream (404). */
export async function fetchStateChanges(endpoint: MetricsEndpoint, since: number, timeoutMs: number): Promise<StateChangeAnswer | null> {
  const res = await fetch(`${endpoint.url}/state-change?since=${since}`, { signal: AbortSignal.timeout(timeoutMs) });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`GET ${endpoint.url}/state-change answered ${res.status}`);
  return (await res.json()) as StateChangeAnswer;
}

import { describe, expect, it } from 'vitest';
import { endpointFromConfig, normalizeMetricsUrl, parseMetricsUrls } from './metrics-endpoints.js';

const broker = { nodeId: 2, host: '10.0.0.5', port: 9092, rack: null };

describe('console metrics endpoints', () => {
  it('console metrics endpoints – --metrics-urls accepts host:port, base URLs and /metrics URLs', () => {
    expect(normalizeMetricsUrl('127.0.0.1:9404')).toBe('http://127.0.0.1:9404');
    expect(normalizeMetricsUrl('http://h:9405/metrics')).toBe('http://h:9405');
    expect(normalizeMetricsUrl('https://h/prefix/metrics/')).toBe('https://h/prefix');
    expect(parseMetricsUrls(' a:1, ,b:2/metrics')).toEqual([
      { url: 'http://a:1', brokerId: null },
      { url: 'http://b:2', brokerId: null },
    ]);
  });

  it('console metrics endpoints – from metrics.port / metrics.host: disabled ports give none, wildcard hosts mean the advertised host', () => {
    expect(endpointFromConfig(broker, '-1', '')).toBeNull();
    expect(endpointFromConfig(broker, '0', '')).toBeNull();
    expect(endpointFromConfig(broker, null, null)).toBeNull();
    expect(endpointFromConfig(broker, '9406', '')).toEqual({ url: 'http://10.0.0.5:9406', brokerId: 2 });
    expect(endpointFromConfig(broker, '9406', '0.0.0.0')!.url).toBe('http://10.0.0.5:9406');
    expect(endpointFromConfig(broker, '9406', '127.0.0.2')!.url).toBe('http://127.0.0.2:9406');
    expect(endpointFromConfig(broker, '9406', '::1')!.url).toBe('http://[::1]:9406');
  });
});

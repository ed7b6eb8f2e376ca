import { describe, expect, it } from 'vitest';
import { ConsoleUsageError, parseConsoleOptions } from './console.js';

describe('console command', () => {
  it('console command – flags: bootstrap required, port 8080 and loopback by default, bad numbers rejected', () => {
    expect(parseConsoleOptions({ bootstrapServer: 'a:9092,b:9093' })).toEqual({
      bootstrapServers: 'a:9092,b:9093',
      port: 8080,
      host: '127.0.0.1',
      pollIntervalMs: 1000,
    });
    expect(parseConsoleOptions({ bootstrapServer: 'a:1', port: '0', host: '0.0.0.0', metricsUrls: 'a:9404', pollIntervalMs: '500' })).toEqual({
      bootstrapServers: 'a:1',
      port: 0,
      host: '0.0.0.0',
      pollIntervalMs: 500,
      metricsUrls: 'a:9404',
    });
    expect(() => parseConsoleOptions({})).toThrow(ConsoleUsageError);
    expect(() => parseConsoleOptions({ bootstrapServer: 'a:1', port: '70000' })).toThrow(/--port/);
    expect(() => parseConsoleOptions({ bootstrapServer: 'a:1', pollIntervalMs: '10' })).toThrow(/--poll-interval-ms/);
  });
});

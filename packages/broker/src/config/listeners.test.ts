import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { formatEndpoint, parseListeners, parseSecurityProtocolMap } from './listeners.js';

const MAP = parseSecurityProtocolMap('PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT,SSL:SSL');

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('broker config – listeners', () => {
  it('broker config – parses NAME://host:port endpoints with their protocols', () => {
    expect(parseListeners('PLAINTEXT://127.0.0.1:9092, CONTROLLER://localhost:19092', MAP)).toEqual([
      { listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 'PLAINTEXT' },
      { listenerName: 'CONTROLLER', host: 'localhost', port: 19092, securityProtocol: 'PLAINTEXT' },
    ]);
  });

  it('broker config – an empty host means all interfaces; port 0 means random', () => {
    expect(parseListeners('PLAINTEXT://:0', MAP)).toEqual([{ listenerName: 'PLAINTEXT', host: '', port: 0, securityProtocol: 'PLAINTEXT' }]);
  });

  it('broker config – IPv6 literals in brackets, with zone ids', () => {
    const [a, b] = parseListeners('PLAINTEXT://[::1]:9092,EXTERNAL://[fe80::1%eth0]:9093', MAP);
    expect(a).toMatchObject({ host: '::1', port: 9092 });
    expect(b).toMatchObject({ host: 'fe80::1%eth0', port: 9093 });
    expect(formatEndpoint(a!)).toBe('PLAINTEXT://[::1]:9092');
  });

  it('broker config – listener names are upper-cased, like Kafka normalises them', () => {
    expect(parseListeners('plaintext://h:1', MAP)[0]?.listenerName).toBe('PLAINTEXT');
  });

  it('broker config – formatEndpoint writes Kafka connection strings', () => {
    expect(formatEndpoint({ listenerName: 'PLAINTEXT', host: '', port: 9092 })).toBe('PLAINTEXT://:9092');
    expect(formatEndpoint({ listenerName: 'PLAINTEXT', host: 'kafka-1', port: 29092 })).toBe('PLAINTEXT://kafka-1:29092');
  });

  it('broker config – the empty string is no listeners', () => {
    expect(parseListeners('  ', MAP)).toEqual([]);
  });

  it('broker config – malformed endpoints are rejected with the key and value', () => {
    for (const bad of ['PLAINTEXT:9092', 'PLAINTEXT://host', '://host:1', 'PLAINTEXT://ho st:1', 'PLAINTEXT://h:99999', 'PLAINTEXT://h:-1']) {
      const e = errorOf(() => parseListeners(bad, MAP, { key: 'listeners' }));
      expect(e.key).toBe('listeners');
      expect(e.message).toContain(bad);
    }
  });

  it('broker config – a listener missing from the protocol map is rejected', () => {
    expect(errorOf(() => parseListeners('INTERNAL://h:1', MAP)).message).toMatch(/INTERNAL is not in listener\.security\.protocol\.map/);
  });

  it('broker config – duplicate names are rejected', () => {
    expect(errorOf(() => parseListeners('PLAINTEXT://a:1,PLAINTEXT://b:2', MAP)).message).toMatch(/different name/);
  });

  it('broker config – duplicate ports are rejected for listeners but allowed for advertised listeners', () => {
    expect(errorOf(() => parseListeners('PLAINTEXT://a:9092,EXTERNAL://b:9092', MAP)).message).toMatch(/different port/);
    expect(parseListeners('PLAINTEXT://a:9092,EXTERNAL://b:9092', MAP, { key: 'advertised.listeners' })).toHaveLength(2);
  });

  it('broker config – port 0 may repeat; one IPv4 and one IPv6 literal may share a port (KIP-797)', () => {
    expect(parseListeners('PLAINTEXT://:0,EXTERNAL://:0', MAP)).toHaveLength(2);
    expect(parseListeners('PLAINTEXT://127.0.0.1:9092,EXTERNAL://[::1]:9092', MAP)).toHaveLength(2);
    expect(() => parseListeners('PLAINTEXT://127.0.0.1:9092,EXTERNAL://127.0.0.2:9092', MAP)).toThrow(/different port/);
    expect(() => parseListeners('PLAINTEXT://127.0.0.1:9092,EXTERNAL://[::1]:9092,CONTROLLER://:9092', MAP)).toThrow(/different port/);
  });
});

describe('broker config – listener.security.protocol.map', () => {
  it('broker config – parses NAME:PROTOCOL pairs, case-insensitively, names upper-cased', () => {
    expect(parseSecurityProtocolMap(' internal : plaintext , EXTERNAL:SASL_SSL ')).toEqual({ INTERNAL: 'PLAINTEXT', EXTERNAL: 'SASL_SSL' });
    expect(parseSecurityProtocolMap('')).toEqual({});
  });

  it('broker config – rejects entries without a colon, unknown protocols and repeated names', () => {
    expect(errorOf(() => parseSecurityProtocolMap('PLAINTEXT')).key).toBe('listener.security.protocol.map');
    expect(errorOf(() => parseSecurityProtocolMap('A:TLS')).message).toMatch(/unknown security protocol 'TLS'.*PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/);
    expect(errorOf(() => parseSecurityProtocolMap('A:SSL,a:PLAINTEXT')).message).toMatch(/mapped twice/);
  });
});

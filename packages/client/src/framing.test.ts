import { describe, expect, it } from 'vitest';
import { ProtocolDecodeError } from '@samsa/protocol';
import { FrameSplitter } from './framing.js';
import { formatAddress, parseAddress, parseBootstrapServers } from './address.js';

const frame = (payload: string) => {
  const b = Buffer.alloc(4 + payload.length);
  b.writeInt32BE(payload.length, 0);
  b.write(payload, 4, 'latin1');
  return b;
};

describe('FrameSplitter', () => {
  it('splits frames arriving whole, together, and byte by byte', () => {
    const stream = Buffer.concat([frame('abc'), frame(''), frame('hello world')]);
    expect(new FrameSplitter().push(stream).map((f) => f.toString())).toEqual(['abc', '', 'hello world']);
    const s = new FrameSplitter();
    const got: string[] = [];
    for (const byte of stream) got.push(...s.push(Buffer.from([byte])).map((f) => f.toString()));
    expect(got).toEqual(['abc', '', 'hello world']);
    expect(s.pendingBytes).toBe(0);
  });

  it('keeps a partial frame until the rest arrives', () => {
    const s = new FrameSplitter();
    const f = frame('0123456789');
    expect(s.push(f.subarray(0, 2))).toEqual([]);
    expect(s.push(f.subarray(2, 9))).toEqual([]);
    expect(s.pendingBytes).toBe(9);
    expect(s.push(Buffer.concat([f.subarray(9), frame('x').subarray(0, 3)])).map(String)).toEqual(['0123456789']);
    expect(s.push(frame('x').subarray(3)).map(String)).toEqual(['x']);
  });

  it('rejects negative and oversized frame sizes', () => {
    const neg = Buffer.alloc(4);
    neg.writeInt32BE(-5, 0);
    expect(() => new FrameSplitter().push(neg)).toThrow(ProtocolDecodeError);
    expect(() => new FrameSplitter(10).push(frame('01234567890'))).toThrow(/invalid frame size 11/);
  });
});

describe('bootstrap.servers', () => {
  it('parses host:port lists, IPv6 and listener prefixes', () => {
    expect(parseBootstrapServers('localhost:9092, 127.0.0.1:9093,,')).toEqual([
      { host: 'localhost', port: 9092 },
      { host: '127.0.0.1', port: 9093 },
    ]);
    expect(parseBootstrapServers(['a:1,b:2', 'a:1'])).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
    ]);
    expect(parseAddress('[::1]:9092')).toEqual({ host: '::1', port: 9092 });
    expect(parseAddress('PLAINTEXT://broker-1.example:19092')).toEqual({ host: 'broker-1.example', port: 19092 });
    expect(formatAddress({ host: '::1', port: 9092 })).toBe('[::1]:9092');
  });

  it('rejects malformed entries with Kafka messages', () => {
    expect(() => parseBootstrapServers('')).toThrow('No resolvable bootstrap urls given in bootstrap.servers');
    expect(() => parseBootstrapServers('localhost')).toThrow('Invalid url in bootstrap.servers: localhost');
    expect(() => parseBootstrapServers('localhost:0')).toThrow('Invalid url in bootstrap.servers: localhost:0');
    expect(() => parseBootstrapServers('localhost:99999')).toThrow(/Invalid url/);
  });
});

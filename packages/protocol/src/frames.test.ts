import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Reader } from './codec/reader.js';
import { Writer } from './codec/writer.js';
import { ProtocolDecodeError, ProtocolEncodeError } from './codec/errors.js';
import { readRequestHeader, readResponseHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader, writeResponseHeader } from './headers.js';
import { API_KEYS, API_TABLE, getApi } from './generated/index.js';
import type { MetadataResponse } from './generated/index.js';
import { apiVersionsFallback, buildApiVersionsResponse, encodeUnsupportedApiVersionsResponse, supportedApiVersions } from './api-versions.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from './frames.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const ascii = (s: string) => Buffer.from(s, 'latin1').toString('hex');

describe('headers', () => {
  it('headers – request header v0/v1/v2 layouts', () => {
    const h = { apiKey: 3, apiVersion: 9, correlationId: 0x01020304, clientId: 'ab' };
    const enc = (v: 0 | 1 | 2) => {
      const w = new Writer();
      writeRequestHeader(w, v, h);
      return w.toBuffer();
    };
    expect(enc(0)).toEqual(hex('0003 0009 01020304'));
    expect(enc(1)).toEqual(hex('0003 0009 01020304 0002 6162'));
    // v2: the client id keeps its INT16 length; a tagged-field section follows
    expect(enc(2)).toEqual(hex('0003 0009 01020304 0002 6162 00'));
    expect(readRequestHeader(new Reader(enc(2)), 2)).toEqual({ ...h, unknownTaggedFields: undefined });
    expect(readRequestHeader(new Reader(enc(0)), 0)).toEqual({ ...h, clientId: null });
    expect(readRequestHeader(new Reader(hex('0003 0009 01020304 ffff')), 1).clientId).toBeNull();
  });

  it('headers – response header v0/v1 layouts', () => {
    const w = new Writer();
    writeResponseHeader(w, 0, { correlationId: 5 });
    writeResponseHeader(w, 1, { correlationId: 6 });
    expect(w.finish()).toEqual(hex('00000005 00000006 00'));
    const r = new Reader(w.finish());
    expect(readResponseHeader(r, 0).correlationId).toBe(5);
    expect(readResponseHeader(r, 1).correlationId).toBe(6);
  });

  it('headers – header versions follow flexibility, ApiVersions responses always v0', () => {
    expect(requestHeaderVersion(3, 8, false)).toBe(1);
    expect(requestHeaderVersion(3, 9, true)).toBe(2);
    expect(requestHeaderVersion(7, 0, false)).toBe(0);
    expect(responseHeaderVersion(3, true)).toBe(1);
    expect(responseHeaderVersion(3, false)).toBe(0);
    expect(responseHeaderVersion(18, true)).toBe(0);
  });
});

describe('api table', () => {
  it('api table – version ranges of the core APIs', () => {
    const ranges = Object.fromEntries(API_TABLE.map((e) => [e.name, [e.minVersion, e.maxVersion, e.flexibleFrom]]));
    expect(ranges).toMatchObject({
      Produce: [0, 11, 9],
      Fetch: [0, 17, 12],
      ListOffsets: [0, 9, 6],
      Metadata: [0, 12, 9],
      ApiVersions: [0, 4, 3],
      InitProducerId: [0, 5, 2],
      OffsetForLeaderEpoch: [0, 4, 4],
      DescribeCluster: [0, 1, 0],
    });
    expect(API_KEYS.Fetch).toBe(1);
    expect(getApi(18)?.name).toBe('ApiVersions');
    expect(getApi(32767)).toBeUndefined();
    expect(getApi(-1)).toBeUndefined();
  });

  it('api versions – the advertised list is derived from API_TABLE', () => {
    const list = supportedApiVersions();
    expect(list.length).toBe(API_TABLE.length);
    expect(list.map((k) => k.apiKey)).toEqual([...list.map((k) => k.apiKey)].sort((a, b) => a - b));
    expect(list.find((k) => k.apiKey === 1)).toEqual({ apiKey: 1, minVersion: 0, maxVersion: 17 });
    // a filter never hides ApiVersions itself
    expect(supportedApiVersions((k) => k === 0).map((k) => k.apiKey)).toEqual([0, 18]);
    expect(buildApiVersionsResponse().apiKeys).toEqual(list);
  });
});

describe('frames', () => {
  it('frames – golden: ApiVersions v0 request (header v1, empty body)', () => {
    const frame = hex(`0012 0000 00000001 0004 ${ascii('kcat')}`);
    const d = decodeRequest(frame);
    expect(d).toMatchObject({ ok: true, apiKey: 18, apiVersion: 0, trailingBytes: 0 });
    if (!d.ok || d.apiKey !== 18) throw new Error('unreachable');
    expect(d.header).toMatchObject({ correlationId: 1, clientId: 'kcat' });
    expect(d.body).toMatchObject({ clientSoftwareName: '', clientSoftwareVersion: '' });
  });

  it('frames – golden: ApiVersions v3 request (header v2, compact strings, tagged sections)', () => {
    const frame = hex(`0012 0003 00000007 0007 ${ascii('rdkafka')} 00  0b ${ascii('librdkafka')} 06 ${ascii('2.0.2')} 00`);
    const d = decodeRequest(frame);
    if (!d.ok || d.apiKey !== 18) throw new Error(`decode failed: ${JSON.stringify(d)}`);
    expect(d.trailingBytes).toBe(0);
    expect(d.header.clientId).toBe('rdkafka');
    expect(d.body.clientSoftwareName).toBe('librdkafka');
    expect(d.body.clientSoftwareVersion).toBe('2.0.2');
    // encoding the same request gives the same bytes (after the size prefix)
    const again = encodeRequest(18, 3, 7, 'rdkafka', { clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.0.2' });
    expect(again.readInt32BE(0)).toBe(frame.length);
    expect(again.subarray(4)).toEqual(frame);
  });

  it('frames – golden: Metadata v1 request for all topics (null array)', () => {
    const d = decodeRequest(hex(`0003 0001 0000002a 0001 ${ascii('c')} ffffffff`));
    if (!d.ok || d.apiKey !== 3) throw new Error('decode failed');
    expect(d.body.topics).toBeNull();
    expect(d.body.allowAutoTopicCreation).toBe(true); // default for versions before 4
  });

  it('frames – golden: Produce v3 request keeps records as a view of the frame', () => {
    const records = hex('0102030405');
    const frame = hex(
      `0000 0003 00000009 0001 ${ascii('p')}` + // header
        'ffff 0001 00007530' + // null transactional id, acks 1, timeout 30000
        `00000001 0001 ${ascii('t')} 00000001 00000000 00000005 0102030405`,
    );
    const d = decodeRequest(frame);
    if (!d.ok || d.apiKey !== 0) throw new Error('decode failed');
    const rec = d.body.topicData[0]?.partitionData[0]?.records;
    expect(rec).toEqual(records);
    expect(rec?.buffer).toBe(frame.buffer);
    expect(d.body.transactionalId).toBeNull();
    expect(d.body.acks).toBe(1);
  });

  it('frames – golden: KIP-511 reply to an ApiVersions version we do not know', () => {
    expect(encodeUnsupportedApiVersionsResponse(7, [{ apiKey: 18, minVersion: 0, maxVersion: 4 }])).toEqual(
      hex('00000010 00000007 0023 00000001 0012 0000 0004'),
    );
    // a v5 request (header v2) from a newer client
    const d = decodeRequest(hex(`0012 0005 0000000b 0001 ${ascii('x')} 00 02 ${ascii('a')} 02 ${ascii('b')} 00`));
    expect(d).toMatchObject({ ok: false, error: 'UNSUPPORTED_VERSION', header: { apiKey: 18, apiVersion: 5, correlationId: 11, clientId: 'x' } });
    if (d.ok || d.error !== 'UNSUPPORTED_VERSION' || !d.response) throw new Error('expected a KIP-511 response');
    const frame = d.response;
    expect(apiVersionsFallback(d.header)).toEqual(frame);
    expect(apiVersionsFallback({ ...d.header, apiVersion: 4 })).toBeUndefined();
    expect(apiVersionsFallback({ ...d.header, apiKey: 3 })).toBeUndefined();
    expect(frame.readInt32BE(0)).toBe(frame.length - 4);
    const res = decodeResponse(18, 0, frame.subarray(4));
    expect(res.header.correlationId).toBe(11);
    expect(res.body.errorCode).toBe(35);
    expect(res.body.apiKeys).toEqual(supportedApiVersions());
    expect(res.trailingBytes).toBe(0);
  });

  it('frames – unknown api keys and unsupported versions are typed failures', () => {
    expect(decodeRequest(hex(`7fff 0000 00000003 0001 ${ascii('z')}`))).toMatchObject({
      ok: false,
      error: 'UNKNOWN_API_KEY',
      header: { apiKey: 32767, correlationId: 3, clientId: 'z' },
    });
    const d = decodeRequest(hex(`0003 000d 00000004 ffff`));
    expect(d).toMatchObject({ ok: false, error: 'UNSUPPORTED_VERSION', header: { apiVersion: 13, correlationId: 4 }, response: undefined });
    expect(decodeRequest(hex('0003 ffff 00000004'))).toMatchObject({ ok: false, error: 'UNSUPPORTED_VERSION' });
  });

  it('frames – malformed frames are typed failures carrying a ProtocolDecodeError', () => {
    const short = decodeRequest(hex('0003 00'));
    expect(short).toMatchObject({ ok: false, error: 'MALFORMED', header: undefined });
    const truncated = decodeRequest(hex(`0003 0001 00000005 0001 ${ascii('c')} 00000002 0001`));
    expect(truncated).toMatchObject({ ok: false, error: 'MALFORMED', header: { correlationId: 5 } });
    if (truncated.ok || truncated.error !== 'MALFORMED') throw new Error('unreachable');
    expect(truncated.cause).toBeInstanceOf(ProtocolDecodeError);
    expect(truncated.cause.message).toBe('Metadata request v1: array length 2 exceeds the 2 remaining bytes at offset 11');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.constantFrom(...API_TABLE.map((e) => e.apiKey)), fc.nat(20), (tail, key, ver) => {
        const head = Buffer.alloc(8);
        head.writeInt16BE(key, 0);
        head.writeInt16BE(ver, 2);
        const res = decodeRequest(Buffer.concat([head, Buffer.from(tail)]));
        expect(typeof res.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });

  it('frames – responses use header v1 when flexible, v0 otherwise and always for ApiVersions', () => {
    const body: MetadataResponse = {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 1, host: 'h', port: 9092, rack: null }],
      clusterId: 'c',
      controllerId: 1,
      topics: [],
      clusterAuthorizedOperations: -2147483648,
    };
    const v9 = encodeResponse(3, 9, 77, body);
    expect(v9.subarray(0, 9)).toEqual(hex(`${(v9.length - 4).toString(16).padStart(8, '0')} 0000004d 00`));
    expect(decodeResponse(3, 9, v9.subarray(4)).body).toMatchObject(body);
    const v8 = encodeResponse(3, 8, 77, body);
    expect(v8.subarray(4, 12)).toEqual(hex('0000004d 00000000')); // correlation id, then throttle time
    const av = encodeResponse(18, 3, 78, buildApiVersionsResponse({ apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }] }));
    // header v0 (no tagged byte): error code follows the correlation id directly
    expect(av).toEqual(hex('00000013 0000004e 0000 02 0012 0000 0004 00 00000000 00'));
  });

  it('frames – encodeRequest/decodeRequest round-trip at the highest version of each API', () => {
    const fetch = {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 1,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: '', topicId: Buffer.alloc(16, 1), partitions: [] }],
      forgottenTopicsData: [],
      rackId: 'r1',
    };
    const frame = encodeRequest(1, 17, 1, 'c', fetch);
    const d = decodeRequest(frame.subarray(4));
    if (!d.ok || d.apiKey !== 1) throw new Error('decode failed');
    expect(d.body).toMatchObject(fetch);
    // a non-ignorable field that a version cannot carry is an encode error, not silently dropped
    expect(() => encodeRequest(1, 14, 1, 'c', { ...fetch, replicaState: { replicaId: 3, replicaEpoch: 1n } })).toThrow(ProtocolEncodeError);
    // ...while ignorable ones are dropped (topic ids before v13)
    const v12 = decodeRequest(encodeRequest(1, 12, 1, 'c', fetch).subarray(4));
    if (!v12.ok || v12.apiKey !== 1) throw new Error('decode failed');
    expect(v12.body.topics[0]?.topicId).toEqual(Buffer.alloc(16));
  });
});

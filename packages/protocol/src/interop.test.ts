// Cross-checks the specs against two independent client implementations installed in the repo:
// requests encoded by KafkaJS 2.2.4 and @platformatic/kafka 2.12.1 must decode with our codecs,
// and responses we encode must parse with theirs. (Real-socket captures come in a later task.)
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import * as plt from '@platformatic/kafka';
import { decodeRequest, encodeResponse } from './frames.js';
import { buildApiVersionsResponse, supportedApiVersions } from './api-versions.js';
import type {
  ApiKey,
  ApiResponseMap,
  DescribeClusterResponse,
  FetchResponse,
  InitProducerIdResponse,
  ListOffsetsResponse,
  MetadataResponse,
  OffsetForLeaderEpochResponse,
  ProduceResponse,
} from './index.js';
import type { DecodedRequest } from './frames.js';

const cjs = createRequire(import.meta.url);

// ---- KafkaJS ----------------------------------------------------------------------------------

interface KjsRequest {
  apiKey: number;
  apiVersion: number;
}
type KjsRequestFactory = (args: Record<string, unknown>) => KjsRequest;
type KjsFrame = (args: { correlationId: number; clientId: string; request: KjsRequest }) => Promise<{ buffer: Buffer }>;
interface KjsResponse {
  decode(raw: Buffer): Promise<unknown>;
  parse(decoded: unknown): Promise<Record<string, unknown>>;
}
const kjsFrame = cjs('kafkajs/src/protocol/request') as KjsFrame;
const kjsReq = (dir: string, v: number) => cjs(`kafkajs/src/protocol/requests/${dir}/v${v}/request`) as KjsRequestFactory;
const kjsRes = (dir: string, v: number) => cjs(`kafkajs/src/protocol/requests/${dir}/v${v}/response`) as KjsResponse;

async function kjsDecode(dir: string, v: number, args: Record<string, unknown>): Promise<DecodedRequest> {
  const req = kjsReq(dir, v)(args);
  expect(req.apiVersion).toBe(v);
  const frame = (await kjsFrame({ correlationId: 42, clientId: 'kafkajs', request: req })).buffer;
  const d = decodeRequest(frame.subarray(4));
  if (!d.ok) throw new Error(`${dir} v${v}: ${d.error} ${d.error === 'MALFORMED' ? d.cause.message : ''}`);
  expect(d.header).toMatchObject({ correlationId: 42, clientId: 'kafkajs' });
  expect(d.trailingBytes, `${dir} v${v} trailing bytes`).toBe(0);
  return d;
}

/** Our response (header v0: KafkaJS versions are all non-flexible) parsed by KafkaJS. */
async function kjsParse<K extends ApiKey>(dir: string, apiKey: K, v: number, body: ApiResponseMap[K]): Promise<Record<string, unknown>> {
  const frame = encodeResponse(apiKey, v, 42, body);
  expect(frame.readInt32BE(4)).toBe(42);
  const mod = kjsRes(dir, v);
  return mod.parse(await mod.decode(frame.subarray(8)));
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

const metadataBody: MetadataResponse = {
  throttleTimeMs: 0,
  brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: 'r1' }],
  clusterId: 'cluster-1',
  controllerId: 1,
  topics: [
    {
      errorCode: 0,
      name: 'events',
      topicId: Buffer.from('00112233445566778899aabbccddeeff', 'hex'),
      isInternal: false,
      partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 3, replicaNodes: [1, 2], isrNodes: [1], offlineReplicas: [] }],
      topicAuthorizedOperations: -2147483648,
    },
  ],
  clusterAuthorizedOperations: -2147483648,
};

const produceBody: ProduceResponse = {
  responses: [
    {
      name: 'events',
      partitionResponses: [
        {
          index: 0,
          errorCode: 0,
          baseOffset: 17n,
          logAppendTimeMs: -1n,
          logStartOffset: 0n,
          recordErrors: [],
          errorMessage: null,
          currentLeader: { leaderId: -1, leaderEpoch: -1 },
        },
      ],
    },
  ],
  throttleTimeMs: 0,
  nodeEndpoints: [],
};

const fetchBody = (records: Buffer | null): FetchResponse => ({
  throttleTimeMs: 0,
  errorCode: 0,
  sessionId: 0,
  responses: [
    {
      topic: 'events',
      topicId: Buffer.from('00112233445566778899aabbccddeeff', 'hex'),
      partitions: [
        {
          partitionIndex: 0,
          errorCode: 0,
          highWatermark: 10n,
          lastStableOffset: 10n,
          logStartOffset: 0n,
          divergingEpoch: { epoch: -1, endOffset: -1n },
          currentLeader: { leaderId: -1, leaderEpoch: -1 },
          snapshotId: { endOffset: -1n, epoch: -1 },
          abortedTransactions: [],
          preferredReadReplica: -1,
          records,
        },
      ],
    },
  ],
  nodeEndpoints: [],
});

const listOffsetsBody: ListOffsetsResponse = {
  throttleTimeMs: 0,
  topics: [{ name: 'events', partitions: [{ partitionIndex: 0, errorCode: 0, oldStyleOffsets: [], timestamp: -1n, offset: 42n, leaderEpoch: 3 }] }],
};

describe('interop', () => {
  it('interop – KafkaJS requests decode (ApiVersions 0-2, Metadata 0-6, ListOffsets 0-3, InitProducerId 0-1)', async () => {
    for (const v of range(0, 2)) {
      const d = await kjsDecode('apiVersions', v, {});
      expect(d.apiKey).toBe(18);
    }
    for (const v of range(0, 6)) {
      const d = await kjsDecode('metadata', v, { topics: ['a', 'b'], allowAutoTopicCreation: false });
      if (d.apiKey !== 3) throw new Error('wrong api');
      expect(d.body.topics?.map((t) => t.name)).toEqual(['a', 'b']);
      expect(d.body.allowAutoTopicCreation).toBe(v < 4);
    }
    for (const v of range(0, 3)) {
      const d = await kjsDecode('listOffsets', v, {
        replicaId: -1,
        isolationLevel: 1,
        topics: [{ topic: 't', partitions: [{ partition: 2, timestamp: -2 }] }],
      });
      if (d.apiKey !== 2) throw new Error('wrong api');
      expect(d.body.topics[0]?.partitions[0]).toMatchObject({ partitionIndex: 2, timestamp: -2n });
      if (v >= 2) expect(d.body.isolationLevel).toBe(1);
    }
    for (const v of range(0, 1)) {
      const d = await kjsDecode('initProducerId', v, { transactionalId: 'tx', transactionTimeout: 6000 });
      if (d.apiKey !== 22) throw new Error('wrong api');
      expect(d.body).toMatchObject({ transactionalId: 'tx', transactionTimeoutMs: 6000 });
    }
  });

  it('interop – KafkaJS Produce 0-7 and Fetch 0-11 requests decode', async () => {
    for (const v of range(0, 7)) {
      const d = await kjsDecode('produce', v, {
        acks: -1,
        timeout: 30000,
        topicData: [{ topic: 'events', partitions: [{ partition: 1, messages: [{ key: 'k', value: 'v', timestamp: 1 }] }] }],
      });
      if (d.apiKey !== 0) throw new Error('wrong api');
      expect(d.body.acks).toBe(-1);
      const p = d.body.topicData[0]?.partitionData[0];
      expect(p?.index).toBe(1);
      expect(p?.records?.length).toBeGreaterThan(20);
      if (v >= 3) expect(p?.records?.readInt8(16)).toBe(2); // RecordBatch magic byte
    }
    for (const v of range(0, 11)) {
      const d = await kjsDecode('fetch', v, {
        replicaId: -1,
        maxWaitTime: 500,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 1,
        topics: [{ topic: 'events', partitions: [{ partition: 0, fetchOffset: '7', maxBytes: 65536 }] }],
        rackId: 'rack-a',
      });
      if (d.apiKey !== 1) throw new Error('wrong api');
      expect(d.body.topics[0]).toMatchObject({ topic: 'events', partitions: [{ partition: 0, fetchOffset: 7n, partitionMaxBytes: 65536 }] });
      if (v >= 11) expect(d.body.rackId).toBe('rack-a');
    }
  });

  it('interop – KafkaJS parses our ApiVersions, Metadata, Produce, Fetch, ListOffsets, InitProducerId responses', async () => {
    for (const v of range(0, 2)) {
      const res = await kjsParse('apiVersions', 18, v, buildApiVersionsResponse());
      expect(res.apiVersions).toEqual(supportedApiVersions());
    }
    for (const v of range(0, 6)) {
      const res = await kjsParse('metadata', 3, v, metadataBody);
      expect(res.brokers).toMatchObject([{ nodeId: 1, host: 'localhost', port: 9092 }]);
      expect(res.topicMetadata).toMatchObject([{ topic: 'events', partitionMetadata: [{ partitionId: 0, leader: 1, replicas: [1, 2], isr: [1] }] }]);
      if (v >= 2) expect(res.clusterId).toBe('cluster-1');
    }
    for (const v of range(0, 7)) {
      const res = await kjsParse('produce', 0, v, produceBody);
      const offset = v < 3 ? { offset: '17' } : { baseOffset: '17' };
      expect(res.topics).toMatchObject([{ topicName: 'events', partitions: [{ partition: 0, errorCode: 0, ...offset }] }]);
    }
    for (const v of range(0, 11)) {
      const res = await kjsParse('fetch', 1, v, fetchBody(Buffer.alloc(0)));
      expect(res.responses).toMatchObject([{ topicName: 'events', partitions: [{ partition: 0, highWatermark: '10', messages: [] }] }]);
    }
    for (const v of range(0, 3)) {
      const body =
        v === 0
          ? {
              ...listOffsetsBody,
              topics: [
                { name: 'events', partitions: [{ partitionIndex: 0, errorCode: 0, oldStyleOffsets: [42n], timestamp: -1n, offset: -1n, leaderEpoch: -1 }] },
              ],
            }
          : listOffsetsBody;
      const res = await kjsParse('listOffsets', 2, v, body);
      expect(res.responses).toMatchObject([{ topic: 'events', partitions: [{ partition: 0, errorCode: 0 }] }]);
    }
    for (const v of range(0, 1)) {
      const body: InitProducerIdResponse = { throttleTimeMs: 0, errorCode: 0, producerId: 1000n, producerEpoch: 2 };
      const res = await kjsParse('initProducerId', 22, v, body);
      expect(res).toMatchObject({ producerId: '1000', producerEpoch: 2 });
    }
  });

  // ---- @platformatic/kafka ----------------------------------------------------------------------

  type PltWriter = { buffer: Buffer };
  type PltApiModule = {
    createRequest: (...args: unknown[]) => PltWriter;
    parseResponse: (correlationId: number, apiKey: number, apiVersion: number, reader: unknown) => unknown;
    api: { key: number; version: number };
  };
  const pltModule = (name: string) => (plt as unknown as Record<string, PltApiModule>)[name]!;

  /** Frames a platformatic request body the way its Connection does (header v2: client id + tags). */
  function pltDecode(name: string, ...args: unknown[]): DecodedRequest {
    const mod = pltModule(name);
    const body = mod.createRequest(...args).buffer;
    const head = Buffer.alloc(8);
    head.writeInt16BE(mod.api.key, 0);
    head.writeInt16BE(mod.api.version, 2);
    head.writeInt32BE(9, 4);
    const clientId = Buffer.from('plt');
    const frame = Buffer.concat([head, Buffer.from([0, clientId.length]), clientId, Buffer.from([0]), body]);
    const d = decodeRequest(frame);
    if (!d.ok) throw new Error(`${name}: ${d.error} ${d.error === 'MALFORMED' ? d.cause.message : ''}`);
    expect(d.apiVersion).toBe(mod.api.version);
    expect(d.trailingBytes, `${name} trailing bytes`).toBe(0);
    return d;
  }

  /** Our response frame parsed by platformatic (which skips the one-byte header tag section itself). */
  function pltParse<K extends ApiKey>(name: string, apiKey: K, body: ApiResponseMap[K]): Record<string, unknown> {
    const mod = pltModule(name);
    const frame = encodeResponse(apiKey, mod.api.version, 9, body);
    const headerLen = apiKey === 18 ? 4 : 5;
    return mod.parseResponse(9, apiKey, mod.api.version, plt.Reader.from(frame.subarray(4 + headerLen))) as Record<string, unknown>;
  }

  const uuidStr = '00112233-4455-6677-8899-aabbccddeeff';
  const uuidBuf = Buffer.from('00112233445566778899aabbccddeeff', 'hex');

  it('interop – @platformatic/kafka requests at the versions it sends decode', () => {
    let d = pltDecode('apiVersionsV3', '@platformatic/kafka', '2.12.1');
    if (d.apiKey !== 18) throw new Error('wrong api');
    expect(d.body).toMatchObject({ clientSoftwareName: '@platformatic/kafka', clientSoftwareVersion: '2.12.1' });

    d = pltDecode('metadataV12', ['events', 'other'], true, false);
    if (d.apiKey !== 3) throw new Error('wrong api');
    expect(d.body.topics?.map((t) => t.name)).toEqual(['events', 'other']);
    expect(d.body.allowAutoTopicCreation).toBe(true);

    d = pltDecode('produceV11', -1, 30000, [{ topic: 'events', partition: 2, key: Buffer.from('k'), value: Buffer.from('v') }], {});
    if (d.apiKey !== 0) throw new Error('wrong api');
    expect(d.body.topicData[0]?.name).toBe('events');
    expect(d.body.topicData[0]?.partitionData[0]?.index).toBe(2);
    expect(d.body.topicData[0]?.partitionData[0]?.records?.readInt8(16)).toBe(2);

    d = pltDecode(
      'fetchV17',
      500,
      1,
      1 << 20,
      1,
      0,
      -1,
      [
        {
          topicId: uuidStr,
          partitions: [{ partition: 0, currentLeaderEpoch: 4, fetchOffset: 7n, lastFetchedEpoch: -1, partitionMaxBytes: 65536, replicaDirectoryId: uuidStr }],
        },
      ],
      [{ topicId: uuidStr, partitions: [1, 2] }],
      'rack-a',
    );
    if (d.apiKey !== 1) throw new Error('wrong api');
    expect(d.body.topics[0]?.topicId).toEqual(uuidBuf);
    expect(d.body.topics[0]?.partitions[0]).toMatchObject({
      partition: 0,
      currentLeaderEpoch: 4,
      fetchOffset: 7n,
      partitionMaxBytes: 65536,
      replicaDirectoryId: uuidBuf,
    });
    expect(d.body.forgottenTopicsData[0]?.partitions).toEqual([1, 2]);
    expect(d.body.rackId).toBe('rack-a');

    d = pltDecode('listOffsetsV9', -1, 1, [{ name: 'events', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }]);
    if (d.apiKey !== 2) throw new Error('wrong api');
    expect(d.body.topics[0]?.partitions[0]).toMatchObject({ partitionIndex: 0, timestamp: -1n });

    d = pltDecode('offsetForLeaderEpochV4', -1, [{ name: 'events', partitions: [{ partitionIndex: 0, currentLeaderEpoch: 5, leaderEpoch: 4 }] }]);
    if (d.apiKey !== 23) throw new Error('wrong api');
    expect(d.body.topics[0]).toMatchObject({ topic: 'events', partitions: [{ partition: 0, currentLeaderEpoch: 5, leaderEpoch: 4 }] });

    d = pltDecode('initProducerIdV5', 'tx-1', 60000, -1n, -1);
    if (d.apiKey !== 22) throw new Error('wrong api');
    expect(d.body).toMatchObject({ transactionalId: 'tx-1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });

    d = pltDecode('describeClusterV1', true, 1);
    if (d.apiKey !== 60) throw new Error('wrong api');
    expect(d.body).toMatchObject({ includeClusterAuthorizedOperations: true, endpointType: 1 });
  });

  it('interop – @platformatic/kafka parses our responses at the versions it sends', () => {
    expect(pltParse('apiVersionsV3', 18, buildApiVersionsResponse()).apiKeys).toMatchObject(
      supportedApiVersions().map((k) => ({ apiKey: k.apiKey, minVersion: k.minVersion, maxVersion: k.maxVersion })),
    );
    expect(pltParse('metadataV12', 3, metadataBody)).toMatchObject({
      brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: 'r1' }],
      clusterId: 'cluster-1',
      topics: [{ name: 'events', topicId: uuidStr, partitions: [{ partitionIndex: 0, leaderId: 1, leaderEpoch: 3, replicaNodes: [1, 2], isrNodes: [1] }] }],
    });
    expect(pltParse('produceV11', 0, produceBody)).toMatchObject({
      responses: [{ name: 'events', partitionResponses: [{ index: 0, errorCode: 0, baseOffset: 17n }] }],
    });
    expect(pltParse('fetchV17', 1, fetchBody(null))).toMatchObject({
      responses: [{ topicId: uuidStr, partitions: [{ partitionIndex: 0, highWatermark: 10n }] }],
    });
    expect(pltParse('listOffsetsV9', 2, listOffsetsBody)).toMatchObject({
      topics: [{ name: 'events', partitions: [{ partitionIndex: 0, offset: 42n, leaderEpoch: 3 }] }],
    });
    const ofle: OffsetForLeaderEpochResponse = {
      throttleTimeMs: 0,
      topics: [{ topic: 'events', partitions: [{ errorCode: 0, partition: 0, leaderEpoch: 4, endOffset: 99n }] }],
    };
    expect(pltParse('offsetForLeaderEpochV4', 23, ofle)).toMatchObject({
      topics: [{ topic: 'events', partitions: [{ partition: 0, leaderEpoch: 4, endOffset: 99n }] }],
    });
    expect(pltParse('initProducerIdV5', 22, { throttleTimeMs: 0, errorCode: 0, producerId: 7n, producerEpoch: 1 })).toMatchObject({
      producerId: 7n,
      producerEpoch: 1,
    });
    const dc: DescribeClusterResponse = {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: 1,
      clusterId: 'cluster-1',
      controllerId: 1,
      brokers: [{ brokerId: 1, host: 'localhost', port: 9092, rack: null }],
      clusterAuthorizedOperations: -2147483648,
    };
    expect(pltParse('describeClusterV1', 60, dc)).toMatchObject({
      clusterId: 'cluster-1',
      controllerId: 1,
      brokers: [{ brokerId: 1, host: 'localhost', port: 9092 }],
    });
  });
});

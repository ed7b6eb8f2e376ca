// The transaction APIs (issue #28): the versions API_TABLE carries, WriteTxnMarkers' wire layout
// checked byte by byte (no client sends it: the coordinator broker does), hand-built responses of
// every transaction API round-tripping at every version, and KafkaJS 2.2.4 (v0-1 of the producer
// APIs) encoding requests we decode and parsing responses we encode. messages.test.ts adds random
// round-trips of every version; golden.test.ts the frames real clients sent.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Reader } from './codec/reader.js';
import { Writer } from './codec/writer.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from './frames.js';
import type { DecodedRequest } from './frames.js';
import {
  API_TABLE,
  readWriteTxnMarkersRequest,
  readWriteTxnMarkersResponse,
  writeWriteTxnMarkersRequest,
  writeWriteTxnMarkersResponse,
} from './generated/index.js';
import type { ApiKey, ApiResponseMap, WriteTxnMarkersRequest, WriteTxnMarkersResponse } from './generated/index.js';

/** Hex with `// comments` and whitespace ignored. */
const hex = (s: string) => Buffer.from(s.replace(/\/\/.*$/gm, '').replace(/\s+/g, ''), 'hex');

function encode<M>(write: (w: Writer, v: number, m: M) => void, v: number, m: M): Buffer {
  const w = new Writer(64);
  write(w, v, m);
  return w.toBuffer();
}

describe('transaction APIs', () => {
  it('transaction APIs – API_TABLE carries the versions clients send, up to Kafka 3.x (not KIP-890 v4+, not ListTransactions v1)', () => {
    const table = Object.fromEntries(
      API_TABLE.filter((a) => [24, 25, 26, 27, 28, 61, 65, 66].includes(a.apiKey)).map((a) => [a.name, [a.minVersion, a.maxVersion]]),
    );
    expect(table).toEqual({
      AddPartitionsToTxn: [0, 3],
      AddOffsetsToTxn: [0, 3],
      EndTxn: [0, 3],
      WriteTxnMarkers: [0, 1],
      TxnOffsetCommit: [0, 3],
      DescribeProducers: [0, 0],
      DescribeTransactions: [0, 0],
      ListTransactions: [0, 0],
    });
  });

  describe('WriteTxnMarkers', () => {
    const request: WriteTxnMarkersRequest = {
      markers: [{ producerId: 5n, producerEpoch: 2, transactionResult: true, topics: [{ name: 't', partitionIndexes: [0, 3] }], coordinatorEpoch: 9 }],
    };
    const response: WriteTxnMarkersResponse = {
      markers: [{ producerId: 5n, topics: [{ name: 't', partitions: [{ partitionIndex: 3, errorCode: 47 }] }] }],
    };

    it('WriteTxnMarkers – v0 request layout: int32 array lengths, int16 string lengths, coordinatorEpoch after the topics', () => {
      const bytes = hex(`
        00000001                          // markers: 1
          0000000000000005 0002 01        // producerId 5, epoch 2, COMMIT
          00000001                        // topics: 1
            0001 74                       // "t"
            00000002 00000000 00000003    // partitions [0, 3]
          00000009                        // coordinatorEpoch 9
      `);
      expect(encode(writeWriteTxnMarkersRequest, 0, request).toString('hex')).toBe(bytes.toString('hex'));
      const r = new Reader(bytes);
      expect(readWriteTxnMarkersRequest(r, 0)).toEqual(request);
      expect(r.remaining).toBe(0);
    });

    it('WriteTxnMarkers – v1 request layout: compact arrays and strings, a tagged-field section per struct', () => {
      const bytes = hex(`
        02                                // markers: 1 (+1)
          0000000000000005 0002 01
          02                              // topics: 1
            02 74                         // "t"
            03 00000000 00000003          // partitions [0, 3]
            00                            // topic tags
          00000009
          00                              // marker tags
        00                                // message tags
      `);
      expect(encode(writeWriteTxnMarkersRequest, 1, request).toString('hex')).toBe(bytes.toString('hex'));
      expect(readWriteTxnMarkersRequest(new Reader(bytes), 1)).toEqual(request);
    });

    it('WriteTxnMarkers – v0 and v1 response layouts', () => {
      const v0 = hex('00000001 0000000000000005 00000001 0001 74 00000001 00000003 002f');
      const v1 = hex('02 0000000000000005 02 02 74 02 00000003 002f 00 00 00 00');
      expect(encode(writeWriteTxnMarkersResponse, 0, response).toString('hex')).toBe(v0.toString('hex'));
      expect(encode(writeWriteTxnMarkersResponse, 1, response).toString('hex')).toBe(v1.toString('hex'));
      expect(readWriteTxnMarkersResponse(new Reader(v0), 0)).toEqual(response);
      expect(readWriteTxnMarkersResponse(new Reader(v1), 1)).toEqual(response);
    });

    it('WriteTxnMarkers – request and response frames round-trip at v0 and v1, v1 with the flexible headers', () => {
      for (const v of [0, 1]) {
        const frame = encodeRequest(27, v, 7, 'broker-1', request);
        const d = decodeRequest(frame.subarray(4));
        if (!d.ok) throw new Error(`v${v}: ${d.error}`);
        expect(d.body).toEqual(request);
        expect(d.header.clientId).toBe('broker-1');
        const res = encodeResponse(27, v, 7, response);
        const back = decodeResponse(27, v, res.subarray(4));
        expect(back.body).toEqual(response);
        expect(back.trailingBytes).toBe(0);
        // v1's response header ends with an (empty) tag section, before the compact markers array
        expect(res.subarray(8, 10).toString('hex')).toBe(v === 1 ? '0002' : '0000');
      }
    });
  });

  /** Hand-built responses, one per API; each round-trips at every version it has. */
  const responses: { [K in ApiKey]?: ApiResponseMap[K] } = {
    24: {
      throttleTimeMs: 10,
      resultsByTopic: [
        {
          name: 'orders',
          resultsByPartition: [
            { partitionIndex: 0, partitionErrorCode: 0 },
            { partitionIndex: 1, partitionErrorCode: 3 },
          ],
        },
      ],
    },
    25: { throttleTimeMs: 0, errorCode: 51 },
    26: { throttleTimeMs: 5, errorCode: 0 },
    28: { throttleTimeMs: 0, topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, errorCode: 22 }] }] },
    61: {
      throttleTimeMs: 0,
      topics: [
        {
          name: 'orders',
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 0,
              errorMessage: null,
              activeProducers: [
                { producerId: 2000n, producerEpoch: 3, lastSequence: 41, lastTimestamp: 1700000000000n, coordinatorEpoch: 1, currentTxnStartOffset: 17n },
              ],
            },
            { partitionIndex: 1, errorCode: 6, errorMessage: 'not the leader', activeProducers: [] },
          ],
        },
      ],
    },
    65: {
      throttleTimeMs: 0,
      transactionStates: [
        {
          errorCode: 0,
          transactionalId: 'tx-1',
          transactionState: 'Ongoing',
          transactionTimeoutMs: 60000,
          transactionStartTimeMs: 1700000000000n,
          producerId: 2000n,
          producerEpoch: 3,
          topics: [{ topic: 'orders', partitions: [0, 1] }],
        },
        {
          errorCode: 105,
          transactionalId: 'tx-unknown',
          transactionState: '',
          transactionTimeoutMs: 0,
          transactionStartTimeMs: -1n,
          producerId: -1n,
          producerEpoch: -1,
          topics: [],
        },
      ],
    },
    66: {
      throttleTimeMs: 0,
      errorCode: 0,
      unknownStateFilters: ['Bogus'],
      transactionStates: [{ transactionalId: 'tx-1', producerId: 2000n, transactionState: 'CompleteCommit' }],
    },
  };

  for (const [key, body] of Object.entries(responses)) {
    const apiKey = Number(key) as ApiKey;
    const api = API_TABLE.find((a) => a.apiKey === apiKey)!;
    it(`transaction APIs – a hand-built ${api.name} response round-trips at every version ${api.minVersion}-${api.maxVersion}`, () => {
      for (let v = api.minVersion; v <= api.maxVersion; v++) {
        const frame = encodeResponse(apiKey, v, 99, body as never);
        const d = decodeResponse(apiKey, v, frame.subarray(4));
        expect(d.header.correlationId).toBe(99);
        expect(d.trailingBytes, `v${v}`).toBe(0);
        expect(d.body, `v${v}`).toEqual(body);
        expect(encodeResponse(apiKey, v, 99, d.body as never).equals(frame), `v${v} re-encode`).toBe(true);
      }
    });
  }
});

// ---- KafkaJS 2.2.4 ------------------------------------------------------------------------------

const cjs = createRequire(import.meta.url);
interface KjsRequest {
  apiKey: number;
  apiVersion: number;
}
type KjsFrame = (args: { correlationId: number; clientId: string; request: KjsRequest }) => Promise<{ buffer: Buffer }>;
interface KjsResponse {
  decode(raw: Buffer): Promise<unknown>;
  parse(decoded: unknown): Promise<Record<string, unknown>>;
}
const kjsFrame = cjs('kafkajs/src/protocol/request') as KjsFrame;
const kjsReq = (dir: string, v: number) => cjs(`kafkajs/src/protocol/requests/${dir}/v${v}/request`) as (args: Record<string, unknown>) => KjsRequest;
const kjsRes = (dir: string, v: number) => cjs(`kafkajs/src/protocol/requests/${dir}/v${v}/response`) as KjsResponse;

async function kjsDecode(dir: string, v: number, args: Record<string, unknown>): Promise<DecodedRequest> {
  const frame = (await kjsFrame({ correlationId: 42, clientId: 'kafkajs', request: kjsReq(dir, v)(args) })).buffer;
  const d = decodeRequest(frame.subarray(4));
  if (!d.ok) throw new Error(`${dir} v${v}: ${d.error}`);
  expect({ apiVersion: d.header.apiVersion, trailingBytes: d.trailingBytes }).toEqual({ apiVersion: v, trailingBytes: 0 });
  return d;
}

async function kjsParse<K extends ApiKey>(dir: string, apiKey: K, v: number, body: ApiResponseMap[K]): Promise<Record<string, unknown>> {
  const mod = kjsRes(dir, v);
  return mod.parse(await mod.decode(encodeResponse(apiKey, v, 42, body).subarray(8)));
}

const responses24: ApiResponseMap[24] = {
  throttleTimeMs: 0,
  resultsByTopic: [{ name: 'orders', resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: 0 }] }],
};

describe('transaction APIs – KafkaJS 2.2.4', () => {
  const ids = { transactionalId: 'tx-1', producerId: '2000', producerEpoch: 3 };
  const ours = { transactionalId: 'tx-1', producerId: 2000n, producerEpoch: 3 };

  it('transaction APIs – KafkaJS requests decode: FindCoordinator v1-2 for a transactional id, and AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit v0-1', async () => {
    for (const v of [1, 2]) {
      expect((await kjsDecode('findCoordinator', v, { coordinatorKey: 'tx-1', coordinatorType: 1 })).body).toMatchObject({ key: 'tx-1', keyType: 1 });
    }
    for (const v of [0, 1]) {
      expect((await kjsDecode('addPartitionsToTxn', v, { ...ids, topics: [{ topic: 'orders', partitions: [0, 2] }] })).body).toEqual({
        ...ours,
        topics: [{ name: 'orders', partitions: [0, 2] }],
      });
      expect((await kjsDecode('addOffsetsToTxn', v, { ...ids, groupId: 'g' })).body).toEqual({ ...ours, groupId: 'g' });
      expect((await kjsDecode('endTxn', v, { ...ids, transactionResult: false })).body).toEqual({ ...ours, committed: false });
      const commit = await kjsDecode('txnOffsetCommit', v, {
        ...ids,
        groupId: 'g',
        topics: [{ topic: 'orders', partitions: [{ partition: 1, offset: '9', metadata: null }] }],
      });
      expect(commit.body).toMatchObject({
        ...ours,
        groupId: 'g',
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 9n, committedMetadata: null }] }],
      });
    }
  });

  it('transaction APIs – KafkaJS parses our AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit v0-1 responses', async () => {
    for (const v of [0, 1]) {
      const added = await kjsParse('addPartitionsToTxn', 24, v, responses24);
      expect(added).toMatchObject({ errors: [{ topic: 'orders', partitionErrors: [{ partition: 0, errorCode: 0 }] }] });
      expect(await kjsParse('addOffsetsToTxn', 25, v, { throttleTimeMs: 0, errorCode: 0 })).toMatchObject({ errorCode: 0 });
      expect(await kjsParse('endTxn', 26, v, { throttleTimeMs: 0, errorCode: 0 })).toMatchObject({ errorCode: 0 });
      const committed = await kjsParse('txnOffsetCommit', 28, v, {
        throttleTimeMs: 0,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, errorCode: 0 }] }],
      });
      expect(committed).toMatchObject({ topics: [{ topic: 'orders', partitions: [{ partition: 1, errorCode: 0 }] }] });
    }
    // an error code reaches KafkaJS as its error
    await expect(kjsParse('endTxn', 26, 1, { throttleTimeMs: 0, errorCode: 48 })).rejects.toMatchObject({ type: 'INVALID_TXN_STATE' });
  });
});

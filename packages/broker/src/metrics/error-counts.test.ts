import { describe, expect, it } from 'vitest';
import { countErrorCodes, countResponseErrors, errorName } from './error-counts.js';

describe('countErrorCodes', () => {
  it('metrics – counts every errorCode field in a response, nested ones and NONE included', () => {
    const body = {
      throttleTimeMs: 0,
      errorCode: 0,
      responses: [
        { topic: 'a', partitions: [{ errorCode: 0, records: Buffer.from([0, 0]) }, { errorCode: 6 }] },
        { topic: 'b', partitions: [{ errorCode: 6, highWatermark: 5n }] },
      ],
    };
    expect([...countErrorCodes(body)].sort()).toEqual([
      [0, 2],
      [6, 2],
    ]);
  });

  it('metrics – record buffers are not walked and null bodies count nothing', () => {
    const buf = Buffer.from('{"errorCode":1}');
    expect(countErrorCodes({ records: buf }).size).toBe(0);
    expect(countErrorCodes(null).size).toBe(0);
  });

  it("metrics – error names are Kafka's", () => {
    expect(errorName(0)).toBe('NONE');
    expect(errorName(6)).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(errorName(9999)).toBe('UNKNOWN_9999');
  });

  it("metrics – Produce, Fetch and Metadata responses counted by their shape give the generic walk's counts", () => {
    const leader = { leaderId: -1, leaderEpoch: -1 };
    const produce = {
      responses: [
        {
          name: 'a',
          partitionResponses: [
            { index: 0, errorCode: 0, baseOffset: 5n, logAppendTimeMs: -1n, logStartOffset: 0n, recordErrors: [], errorMessage: null, currentLeader: leader },
          ],
        },
        {
          name: 'b',
          partitionResponses: [
            {
              index: 0,
              errorCode: 87,
              baseOffset: -1n,
              logAppendTimeMs: -1n,
              logStartOffset: -1n,
              recordErrors: [{ batchIndex: 0, batchIndexErrorMessage: 'bad' }],
              errorMessage: 'x',
              currentLeader: leader,
            },
            { index: 1, errorCode: 0, baseOffset: 1n, logAppendTimeMs: -1n, logStartOffset: 0n, recordErrors: [], errorMessage: null, currentLeader: leader },
          ],
        },
      ],
      throttleTimeMs: 0,
      nodeEndpoints: [],
    };
    const fetch = {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [
        {
          topic: 'a',
          topicId: Buffer.alloc(16),
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 0,
              highWatermark: 3n,
              lastStableOffset: 3n,
              logStartOffset: 0n,
              divergingEpoch: { epoch: -1, endOffset: -1n },
              currentLeader: leader,
              snapshotId: { endOffset: -1n, epoch: -1 },
              abortedTransactions: [],
              preferredReadReplica: -1,
              records: Buffer.alloc(10),
            },
            {
              partitionIndex: 1,
              errorCode: 6,
              highWatermark: -1n,
              lastStableOffset: -1n,
              logStartOffset: -1n,
              divergingEpoch: { epoch: -1, endOffset: -1n },
              currentLeader: leader,
              snapshotId: { endOffset: -1n, epoch: -1 },
              abortedTransactions: null,
              preferredReadReplica: -1,
              records: Buffer.alloc(0),
            },
          ],
        },
      ],
      nodeEndpoints: [],
    };
    const sorted = (m: Map<number, number>) => [...m].sort((x, y) => x[0] - y[0]);
    expect(sorted(countResponseErrors(0, produce))).toEqual(sorted(countErrorCodes(produce)));
    expect(sorted(countResponseErrors(0, produce))).toEqual([
      [0, 2],
      [87, 1],
    ]);
    expect(sorted(countResponseErrors(1, fetch))).toEqual(sorted(countErrorCodes(fetch)));
    expect(sorted(countResponseErrors(1, fetch))).toEqual([
      [0, 2],
      [6, 1],
    ]);
    // Metadata along its shape too: topics' and partitions' errors, not the brokers or replica arrays
    const metadata = {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 1, host: 'h', port: 9092, rack: null }],
      clusterId: 'c',
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 't',
          partitions: [
            { errorCode: 0, partitionIndex: 0, leaderId: 1, replicaNodes: [1, 2], isrNodes: [1], offlineReplicas: [2] },
            { errorCode: 9, partitionIndex: 1, leaderId: -1, replicaNodes: [2], isrNodes: [], offlineReplicas: [2] },
          ],
        },
        { errorCode: 3, name: 'gone', partitions: [] },
      ],
    };
    expect(sorted(countResponseErrors(3, metadata))).toEqual(sorted(countErrorCodes(metadata)));
    expect(sorted(countResponseErrors(3, metadata))).toEqual([
      [0, 2],
      [3, 1],
      [9, 1],
    ]);
    // other APIs take the generic walk
    const offsets = { groups: [{ errorCode: 16, topics: [{ partitions: [{ errorCode: 0 }] }] }] };
    expect(sorted(countResponseErrors(9, offsets))).toEqual([
      [0, 1],
      [16, 1],
    ]);
  });
});

/**
 * DescribeProducers v0 (KIP-664) through the request dispatcher: the producer state of real logs
 * (an open transaction, a committed one, an idempotent producer), a follower's replica answering
 * too (as Kafka's Partition.activeProducerState), and the partition errors of ReplicaManager.
 */
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeResponse, encodeEndTxnMarkerBatch, encodeRecordBatch, encodeRequest, ErrorCode, topicPartitionKey, type ApiResponseMap } from '@samsa/protocol';
import { Log, logConfig } from '@samsa/storage';
import { makeTempDir } from '@samsa/storage/testing';
import type { ConnectionInfo } from '../network/socket-server.js';
import { RequestHandler } from '../server/request-handler.js';
import type { BrokerServices } from './services.js';
import { describeProducersHandler } from './describe-producers.js';

const silent = pino({ level: 'silent' });
const conn: ConnectionInfo = { id: 1, remote: '127.0.0.1:1', listener: 'PLAINTEXT' };

let dir: string;
let cleanup: () => Promise<void>;
let leaderLog: Log;
let followerLog: Log;
let rh: RequestHandler<BrokerServices>;

const data = (producerId: bigint, producerEpoch: number, baseSequence: number, transactional: boolean, timestamp: number) =>
  encodeRecordBatch({
    records: [
      { key: 'k', value: 'v', timestamp },
      { key: 'k', value: 'w', timestamp },
    ],
    producerId,
    producerEpoch,
    baseSequence,
    transactional,
  });

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-describe-producers-'));
  const config = logConfig({ segmentBytes: 1 << 20 });
  leaderLog = await Log.open({ dir: join(dir, 't-0'), topicPartition: { topic: 't', partition: 0 }, config });
  followerLog = await Log.open({ dir: join(dir, 't-1'), topicPartition: { topic: 't', partition: 1 }, config });
  // t-0 (leader here): producer 7 commits a transaction (coordinator epoch 3) and opens another;
  // producer 9 is idempotent only
  await leaderLog.appendAsLeader(data(7n, 2, 0, true, 1_000), 0); // 0-1
  await leaderLog.appendAsLeader(encodeEndTxnMarkerBatch({ producerId: 7n, producerEpoch: 2, commit: true, coordinatorEpoch: 3 }), 0, {
    origin: 'coordinator',
  }); // 2
  await leaderLog.appendAsLeader(data(9n, 0, 0, false, 2_000), 0); // 3-4
  await leaderLog.appendAsLeader(data(7n, 2, 2, true, 3_000), 0); // 5-6, open
  // t-1 (a follower here): producer 11's open transaction, replicated
  await followerLog.appendAsFollower(
    encodeRecordBatch({
      records: [{ key: 'a', value: 'b', timestamp: 4_000 }],
      baseOffset: 0,
      producerId: 11n,
      producerEpoch: 0,
      baseSequence: 0,
      transactional: true,
    }),
  );
  const partitions = new Map([
    ['t-0', { isLeader: true, log: leaderLog }],
    ['t-1', { isLeader: false, log: followerLog }],
    ['t-2', { isLeader: false, log: undefined }], // known, but no replica here
  ]);
  const services = {
    replicaManager: { getPartition: (topic: string, p: number) => partitions.get(topicPartitionKey(topic, p)) },
    metadata: { partition: (topic: string, p: number) => (topic === 't' && p <= 3 ? { topic, partition: p } : undefined) },
  } as unknown as BrokerServices;
  rh = new RequestHandler([describeProducersHandler], services, silent);
});

afterEach(async () => {
  await leaderLog.close();
  await followerLog.close();
  await cleanup();
});

async function describeProducers(topics: Array<{ name: string; partitionIndexes: number[] }>): Promise<ApiResponseMap[61]> {
  const out = await rh.handle(encodeRequest(61, 0, 7, 'test', { topics }).subarray(4), conn);
  if (!Buffer.isBuffer(out)) throw new Error('expected one frame');
  return decodeResponse(61, 0, out.subarray(4)).body;
}

describe('describe producers – DescribeProducers v0', () => {
  it('describe producers – the leader answers each producer: epoch, last sequence and timestamp, coordinator epoch, the open transaction’s first offset', async () => {
    const r = await describeProducers([{ name: 't', partitionIndexes: [0] }]);
    const p = r.topics[0]!.partitions[0]!;
    expect(p).toMatchObject({ partitionIndex: 0, errorCode: ErrorCode.NONE, errorMessage: null });
    const byId = Object.fromEntries(p.activeProducers.map((x) => [String(x.producerId), x]));
    expect(byId['7']).toEqual({ producerId: 7n, producerEpoch: 2, lastSequence: 3, lastTimestamp: 3_000n, coordinatorEpoch: 3, currentTxnStartOffset: 5n });
    expect(byId['9']).toEqual({ producerId: 9n, producerEpoch: 0, lastSequence: 1, lastTimestamp: 2_000n, coordinatorEpoch: -1, currentTxnStartOffset: -1n });
    expect(p.activeProducers).toHaveLength(2);
  });

  it('describe producers – a follower’s replica answers from its own log; no replica here is NOT_LEADER_OR_FOLLOWER, an unknown partition UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const r = await describeProducers([
      { name: 't', partitionIndexes: [1, 2, 9] },
      { name: 'nope', partitionIndexes: [0] },
    ]);
    const [t, nope] = r.topics;
    expect(t!.partitions.map((p) => [p.partitionIndex, p.errorCode])).toEqual([
      [1, ErrorCode.NONE],
      [2, ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    expect(t!.partitions[0]!.activeProducers).toEqual([
      { producerId: 11n, producerEpoch: 0, lastSequence: 0, lastTimestamp: 4_000n, coordinatorEpoch: -1, currentTxnStartOffset: 0n },
    ]);
    expect(nope!.partitions).toEqual([{ partitionIndex: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, activeProducers: [] }]);
  });

  it('describe producers – the marker that ends the open transaction clears currentTxnStartOffset', async () => {
    await leaderLog.appendAsLeader(encodeEndTxnMarkerBatch({ producerId: 7n, producerEpoch: 2, commit: false, coordinatorEpoch: 4 }), 0, {
      origin: 'coordinator',
    });
    const p = (await describeProducers([{ name: 't', partitionIndexes: [0] }])).topics[0]!.partitions[0]!;
    expect(p.activeProducers.find((x) => x.producerId === 7n)).toMatchObject({ coordinatorEpoch: 4, currentTxnStartOffset: -1n });
  });
});

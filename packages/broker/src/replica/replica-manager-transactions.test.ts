/**
 * The broker side of transactions' log part (issue #28), through the replica manager and the Fetch
 * and ListOffsets handlers on the wire: transactional batches from a client, COMMIT / ABORT markers
 * from the coordinator (origin Coordinator; clients still may not write control batches),
 * read_committed fetches bounded by the last stable offset with the aborted transactions, and
 * ListOffsets read_committed answering the LSO.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ErrorCode,
  LeaderAndIsrType,
  decodeResponse,
  encodeEndTxnMarkerBatch,
  encodeRecordBatch,
  encodeRequest,
  type ApiKey,
  type ApiRequestMap,
  type ApiResponseMap,
  type ProduceResponseTopic,
} from '@samsa/protocol';
import type { Log } from '@samsa/storage';
import { batchOf, batchesIn, makeTempDir } from '@samsa/storage/testing';
import type { ConnectionInfo } from '../network/socket-server.js';
import { RequestHandler } from '../server/request-handler.js';
import type { BrokerServices } from '../handlers/services.js';
import { fetchHandler } from '../handlers/fetch.js';
import { listOffsetsHandler } from '../handlers/list-offsets.js';
import { AppendOrigin } from './produce-response.js';
import { testReplicaManagerOptions, testTopicSettings } from './test-replica-manager.js';
import { ReplicaManager } from './replica-manager.js';

const silent = pino({ level: 'silent' });
const TOPIC_ID = Buffer.alloc(16, 1);
const conn: ConnectionInfo = { id: 1, remote: '127.0.0.1:1', listener: 'PLAINTEXT' };
const settings = testTopicSettings(1);

let dir: string;
let cleanup: () => Promise<void>;
let rm: ReplicaManager;
let rh: RequestHandler<BrokerServices>;
const logs: Log[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-rm-txn-'));
  rm = new ReplicaManager({
    ...testReplicaManagerOptions(dir, logs, settings, (topic) => topic === 't'),
  });
  // a single replica: the high watermark follows every append
  const r = await rm.becomeLeaderOrFollower({
    controllerId: 0,
    controllerEpoch: 1,
    brokerEpoch: 1n,
    type: LeaderAndIsrType.FULL,
    partitionStates: [
      {
        topic: 't',
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        partition: 0,
        controllerEpoch: 1,
        leader: 0,
        leaderEpoch: 1,
        isr: [0],
        zkVersion: 0,
        replicas: [0],
        addingReplicas: [],
        removingReplicas: [],
        isNew: true,
        offlineReplicas: [],
        leaderRecoveryState: 0,
      },
    ],
    liveLeaders: [],
  });
  expect(r.partitionErrors.map((e) => e.errorCode)).toEqual([0]);
  const services = {
    replicaManager: rm,
    metadata: { hasTopic: (t: string) => t === 't', topicName: (id: string) => (id === TOPIC_ID.toString('base64url') ? 't' : undefined) },
  } as unknown as BrokerServices;
  rh = new RequestHandler([fetchHandler, listOffsetsHandler], services, silent);
});
afterEach(async () => {
  await rm.shutdown();
  for (const l of logs.splice(0)) if (!l.isClosed) await l.close();
  await cleanup();
});

async function call<K extends ApiKey>(key: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
  const out = await rh.handle(encodeRequest(key, version, 7, 'test', body).subarray(4), conn);
  const frame = Buffer.isBuffer(out) ? out : Buffer.concat(out!);
  return decodeResponse(key, version, frame.subarray(4)).body;
}

function append(records: Buffer, origin: AppendOrigin = AppendOrigin.Client): Promise<ProduceResponseTopic[]> {
  return new Promise((resolve) => rm.appendRecords(30_000, 1, origin, 9, [{ name: 't', partitionData: [{ index: 0, records }] }], resolve));
}
const answer = (r: ProduceResponseTopic[]) => r[0]!.partitionResponses[0]!;

const txnData = (producerId: bigint, seq: number) =>
  encodeRecordBatch({
    records: [
      { key: 'a', value: '1' },
      { key: 'b', value: '2' },
    ],
    producerId,
    producerEpoch: 0,
    baseSequence: seq,
    transactional: true,
  });
const marker = (producerId: bigint, commit: boolean) => encodeEndTxnMarkerBatch({ producerId, producerEpoch: 0, commit, coordinatorEpoch: 1 });

function fetchBody(version: number, isolationLevel: number, fetchOffset: bigint, maxWaitMs = 0): ApiRequestMap[1] {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic: 't',
        topicId: TOPIC_ID,
        partitions: [
          {
            partition: 0,
            currentLeaderEpoch: -1,
            fetchOffset,
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: 1 << 20,
            replicaDirectoryId: Buffer.alloc(16),
          },
        ],
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
}

const latest = (version: number, isolationLevel: number) =>
  call(2, version, {
    replicaId: -1,
    isolationLevel,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
  }).then((r) => r.topics[0]!.partitions[0]!);

describe('replica manager – transactions', () => {
  it('replica manager – markers from the coordinator complete transactions; read_committed Fetch stops at the LSO with the aborted transactions, ListOffsets answers the LSO', async () => {
    expect(answer(await append(txnData(1n, 0))).baseOffset).toBe(0n); // 0-1
    expect(answer(await append(batchOf(3))).baseOffset).toBe(2n); // 2-4
    expect(answer(await append(marker(1n, false), AppendOrigin.Coordinator)).baseOffset).toBe(5n); // ABORT
    expect(answer(await append(txnData(2n, 0))).baseOffset).toBe(6n); // 6-7, open
    // clients still may not write control batches
    expect(answer(await append(marker(2n, true))).errorCode).toBe(ErrorCode.INVALID_RECORD);
    const p = rm.getPartition('t', 0)!;
    expect(p.highWatermark).toBe(8n);
    expect(p.lastStableOffset).toBe(6n);

    for (const v of [4, 11, 12, 16]) {
      const committed = (await call(1, v, fetchBody(v, 1, 0n))).responses[0]!.partitions[0]!;
      expect(committed).toMatchObject({ errorCode: 0, highWatermark: 8n, lastStableOffset: 6n, abortedTransactions: [{ producerId: 1n, firstOffset: 0n }] });
      expect(batchesIn(committed.records!).map((b) => b.baseOffset)).toEqual([0n, 2n, 5n]);
      // read_uncommitted: up to the high watermark, aborted_transactions null (as Kafka answers)
      const uncommitted = (await call(1, v, fetchBody(v, 0, 0n))).responses[0]!.partitions[0]!;
      expect(uncommitted).toMatchObject({ errorCode: 0, highWatermark: 8n, lastStableOffset: 6n, abortedTransactions: null });
      expect(batchesIn(uncommitted.records!).map((b) => b.baseOffset)).toEqual([0n, 2n, 5n, 6n]);
      // from past the ABORT marker (at the LSO): nothing to read, an empty list
      const later = (await call(1, v, fetchBody(v, 1, 6n))).responses[0]!.partitions[0]!;
      expect(later).toMatchObject({ errorCode: 0, abortedTransactions: [] });
      expect(later.records?.length ?? 0).toBe(0);
    }
    for (const v of [2, 5, 7]) {
      expect((await latest(v, 1)).offset).toBe(6n);
      expect((await latest(v, 0)).offset).toBe(8n);
    }
  });

  it('replica manager – a read_committed fetch at the LSO waits for it to move, not for the high watermark', async () => {
    await append(txnData(1n, 0)); // 0-1, open
    await append(batchOf(2)); // 2-3
    const p = rm.getPartition('t', 0)!;
    expect([p.lastStableOffset, p.highWatermark]).toEqual([0n, 4n]);
    let done = false;
    const waiting = call(1, 12, fetchBody(12, 1, 0n, 30_000)).then((r) => {
      done = true;
      return r.responses[0]!.partitions[0]!;
    });
    await vi.waitFor(() => expect(rm.fetchPurgatory.delayed).toBe(1));
    await append(batchOf(1)); // the high watermark moves, the LSO does not
    expect(p.highWatermark).toBe(5n);
    expect(rm.fetchPurgatory.delayed).toBe(1);
    expect(done).toBe(false);
    await append(marker(1n, true), AppendOrigin.Coordinator); // COMMIT at 5: the LSO moves to 6
    const r = await waiting;
    expect(r).toMatchObject({ lastStableOffset: 6n, abortedTransactions: [] });
    expect(batchesIn(r.records!).map((b) => b.baseOffset)).toEqual([0n, 2n, 4n, 5n]);
  });
});

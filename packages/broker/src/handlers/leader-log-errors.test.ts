/**
 * ListOffsets, OffsetForLeaderEpoch and DeleteRecords on a partition this broker hosts but whose log
 * is not attached yet (LeaderAndIsr still applying: the partition is registered, its leader-epoch
 * checkpoint being written) while the metadata cache does not know the topic yet (UpdateMetadata
 * comes after): NOT_LEADER_OR_FOLLOWER, as Kafka's Partition.localLogOrException, not
 * UNKNOWN_TOPIC_OR_PARTITION — librdkafka takes the latter on ListOffsets as permanent (it resets the
 * consumer to auto.offset.reset and kcat exits), seen right after creating 1,000 partitions.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { decodeResponse, encodeRequest, ErrorCode, topicPartitionKey, type ApiKey, type ApiRequestMap, type ApiResponseMap } from '@samsa/protocol';
import type { ConnectionInfo } from '../network/socket-server.js';
import { RequestHandler } from '../server/request-handler.js';
import type { BrokerServices } from './services.js';
import { deleteRecordsHandler } from './delete-records.js';
import { listOffsetsHandler } from './list-offsets.js';
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch.js';

const conn: ConnectionInfo = { id: 1, remote: '127.0.0.1:1', listener: 'PLAINTEXT' };

// t-0: registered as leader, log not attached yet; t-1: not hosted here; the metadata cache knows no topic
const partitions = new Map([['t-0', { isLeader: true, leaderId: 0, log: undefined }]]);
const services = {
  replicaManager: { getPartition: (topic: string, p: number) => partitions.get(topicPartitionKey(topic, p)) },
  metadata: { hasTopic: () => false },
} as unknown as BrokerServices;
const rh = new RequestHandler([listOffsetsHandler, offsetForLeaderEpochHandler, deleteRecordsHandler], services, pino({ level: 'silent' }));

async function call<K extends ApiKey>(apiKey: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
  const out = await rh.handle(encodeRequest(apiKey, version, 7, 'test', body).subarray(4), conn);
  if (!Buffer.isBuffer(out)) throw new Error('expected one frame');
  return decodeResponse(apiKey, version, out.subarray(4)).body;
}

describe('leader log errors – a hosted partition whose log is not attached yet', () => {
  it('leader log errors – ListOffsets: NOT_LEADER_OR_FOLLOWER for the hosted partition, UNKNOWN_TOPIC_OR_PARTITION for one neither hosted nor known', async () => {
    const r = await call(2, 5, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: 't',
          partitions: [0, 1].map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp: -2n, maxNumOffsets: 1 })),
        },
      ],
    });
    expect(r.topics[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode])).toEqual([
      [0, ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
  });

  it('leader log errors – OffsetForLeaderEpoch: NOT_LEADER_OR_FOLLOWER for the hosted partition, UNKNOWN_TOPIC_OR_PARTITION for one neither hosted nor known', async () => {
    const r = await call(23, 3, {
      replicaId: -1,
      topics: [{ topic: 't', partitions: [0, 1].map((partition) => ({ partition, currentLeaderEpoch: -1, leaderEpoch: 0 })) }],
    });
    expect(r.topics[0]!.partitions.map((p) => [p.partition, p.errorCode])).toEqual([
      [0, ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
  });

  it('leader log errors – DeleteRecords: NOT_LEADER_OR_FOLLOWER for the hosted partition, UNKNOWN_TOPIC_OR_PARTITION for one neither hosted nor known', async () => {
    const r = await call(21, 1, { timeoutMs: 0, topics: [{ name: 't', partitions: [0, 1].map((partitionIndex) => ({ partitionIndex, offset: 0n })) }] });
    expect(r.topics[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode])).toEqual([
      [0, ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
  });
});

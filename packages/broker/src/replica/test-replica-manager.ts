/**
 * Test support: ReplicaManager options for one broker (id 0) whose logs are real `Log`s under
 * `dir` (opened ones are pushed to `logs` for the test to close), with fixed topic settings and no
 * ZooKeeper behind it.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { topicPartitionKey } from '@samsa/protocol';
import type { KafkaZk } from '@samsa/zk-paths';
import { Log, logConfig } from '@samsa/storage';
import type { TopicSettings } from '../config/topic-settings.js';
import type { ReplicaManagerOptions } from './replica-manager.js';

const silent = pino({ level: 'silent' });

export function testReplicaManagerOptions(dir: string, logs: Log[], settings: TopicSettings, hasTopic: (topic: string) => boolean): ReplicaManagerOptions {
  return {
    brokerId: 0,
    logs: {
      getOrCreateLog: async (tp, config) => {
        const log = await Log.open({ dir: join(dir, topicPartitionKey(tp)), topicPartition: tp, config });
        logs.push(log);
        return log;
      },
      getLog: () => undefined,
      deleteLog: async () => undefined,
    },
    topicSettings: async () => settings,
    logger: silent,
    stateChangeLogger: silent,
    kzk: {} as KafkaZk,
    replicaLagTimeMaxMs: 30_000,
    interBrokerListenerName: 'PLAINTEXT',
    fetcher: { numFetchers: 1, maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, partitionMaxBytes: 1 << 20, backoffMs: 100, requestTimeoutMs: 30_000 },
    logDirs: [dir],
    highWatermarkCheckpointIntervalMs: 60_000,
    hasTopic,
  };
}

/** Topic settings for these tests: 1 MiB segments, no timestamp bounds, not compacted. */
export function testTopicSettings(minInsyncReplicas: number): TopicSettings {
  return {
    logConfig: logConfig({ segmentBytes: 1 << 20 }),
    minInsyncReplicas,
    timestampBeforeMaxMs: Number.POSITIVE_INFINITY,
    timestampAfterMaxMs: Number.POSITIVE_INFINITY,
    compacted: false,
  };
}

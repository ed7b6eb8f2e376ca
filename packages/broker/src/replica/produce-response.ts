import type { ProduceRequestTopic, ProduceResponsePartition, ProduceResponseTopic, RecordsValidationOptions } from '@samsa/protocol';
import type { TopicSettings } from '../config/topic-settings.js';

/** Who appends (Kafka's AppendOrigin): client appends are validated and kept off internal topics. */
export const AppendOrigin = { Client: 'client', Coordinator: 'coordinator' } as const;
export type AppendOrigin = (typeof AppendOrigin)[keyof typeof AppendOrigin];

const NO_LEADER = { leaderId: -1, leaderEpoch: -1 };

export function partitionResponse(index: number, errorCode: number, errorMessage: string | null): ProduceResponsePartition {
  return { index, errorCode, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage, currentLeader: NO_LEADER };
}

/** Every partition of the request answered with `code`. */
export function answerAll(entries: readonly ProduceRequestTopic[], code: number): ProduceResponseTopic[] {
  return entries.map((t) => ({ name: t.name, partitionResponses: t.partitionData.map((p) => partitionResponse(p.index, code, null)) }));
}

/** The record checks for a client's batch under its topic's settings (Kafka's LogValidator inputs). */
export function validationOptions(produceVersion: number, s: TopicSettings): RecordsValidationOptions {
  return {
    produceVersion,
    maxMessageBytes: s.logConfig.maxMessageBytes,
    segmentBytes: s.logConfig.segmentBytes,
    timestampType: s.logConfig.messageTimestampType === 'LogAppendTime' ? 1 : 0,
    timestampBeforeMaxMs: s.timestampBeforeMaxMs,
    timestampAfterMaxMs: s.timestampAfterMaxMs,
    compactedTopic: s.compacted,
    // compressed batches are decompressed only when a record-level rule needs it
    deepCompressed: s.compacted,
  };
}

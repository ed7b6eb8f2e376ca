import { encodeEndTxnMarkerBatch, ErrorCode, type ProduceRequestTopic, type WriteTxnMarkersResponseWritableTxnMarkerResult } from '@samsa/protocol';
import { GROUP_METADATA_TOPIC_NAME } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import { AppendOrigin } from '../replica/produce-response.js';
import type { BrokerServices } from './services.js';
import { requireCluster } from '../security/authorizer.js';
import { AclOperation } from '@samsa/protocol';
import { PartitionErrors } from './partition-results.js';

/** Coordinator appends are not validated as a client's are; the version only has to be a current one. */
const MARKER_PRODUCE_VERSION = 9;

/**
 * WriteTxnMarkers v0–v1: a transaction coordinator asks this broker, the leader of the
 * transaction's partitions, to end the transaction there. Per marker, each partition hosted here
 * gets a control batch (COMMIT or ABORT, with the coordinator epoch) appended as leader with
 * acks=-1 (origin Coordinator, within request.timeout.ms); partitions without a log here answer
 * UNKNOWN_TOPIC_OR_PARTITION (and, with the test-only SAMSA_TEST_REFUSE_TXN_MARKERS, the refused
 * ones UNSUPPORTED_FOR_MESSAGE_FORMAT). Once a marker is written to `__consumer_offsets` partitions, the group
 * coordinator completes the producer's pending transactional offset commits there.
 */
export const writeTxnMarkersHandler: ApiHandler<27, BrokerServices> = {
  apiKey: 27,
  async handle(req, ctx, s) {
    requireCluster(s, ctx, AclOperation.CLUSTER_ACTION);
    const timeoutMs = s.config.get('request.timeout.ms');
    const results = await Promise.all(
      req.body.markers.map(
        (m) =>
          new Promise<WriteTxnMarkersResponseWritableTxnMarkerResult>((resolve) => {
            const errors = new PartitionErrors();
            const entries: ProduceRequestTopic[] = [];
            for (const t of m.topics) {
              const partitionData: ProduceRequestTopic['partitionData'] = [];
              for (const p of t.partitionIndexes) {
                if (!s.replicaManager.getPartition(t.name, p)?.log) {
                  errors.set(t.name, p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
                  continue;
                }
                if (s.txnMarkerRefusal?.refuse(t.name)) {
                  s.log.warn({ topic: t.name, partition: p, producerId: m.producerId }, 'TEST ONLY: transaction marker refused');
                  errors.set(t.name, p, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT);
                  continue;
                }
                const records = encodeEndTxnMarkerBatch({
                  producerId: m.producerId,
                  producerEpoch: m.producerEpoch,
                  commit: m.transactionResult,
                  coordinatorEpoch: m.coordinatorEpoch,
                });
                partitionData.push({ index: p, records });
              }
              if (partitionData.length > 0) entries.push({ name: t.name, partitionData });
            }
            if (entries.length === 0) {
              resolve({ producerId: m.producerId, topics: errors.topics() });
              return;
            }
            s.replicaManager.appendRecords(timeoutMs, -1, AppendOrigin.Coordinator, MARKER_PRODUCE_VERSION, entries, (responses) => {
              const offsetsPartitions: number[] = [];
              for (const t of responses) {
                for (const p of t.partitionResponses) {
                  errors.set(t.name, p.index, p.errorCode);
                  if (t.name === GROUP_METADATA_TOPIC_NAME && p.errorCode === ErrorCode.NONE) offsetsPartitions.push(p.index);
                }
              }
              if (offsetsPartitions.length > 0) s.groupCoordinator.scheduleHandleTxnCompletion(m.producerId, offsetsPartitions, m.transactionResult);
              resolve({ producerId: m.producerId, topics: errors.topics() });
            });
          }),
      ),
    );
    return { markers: results };
  },
  errorResponse(req, code) {
    return {
      markers: req.body.markers.map((m) => ({
        producerId: m.producerId,
        topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: code })) })),
      })),
    };
  },
};

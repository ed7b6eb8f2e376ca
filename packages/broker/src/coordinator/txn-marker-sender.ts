/**
 * The transaction coordinator's way to the partition leaders: WriteTxnMarkers requests to a
 * broker over the inter-broker listener, one connection per destination broker (Kafka's
 * TransactionMarkerChannelManager network client). Connections to brokers that left the cluster
 * or moved are replaced.
 */
import type { ConnectionOptions } from 'node:tls';
import { API_KEYS, type WriteTxnMarkersRequestWritableTxnMarker, type WriteTxnMarkersResponse } from '@samsa/protocol';
import { TransactionResult, type TxnMarkerEntry, type TxnMarkerResult } from '@samsa/transaction-coordinator';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import { BrokerConnection, type ConnectHook } from '../replica/broker-connection.js';

/** WriteTxnMarkers v1 (flexible): every Samsa broker serves it. */
const WRITE_TXN_MARKERS_VERSION = 1;

export interface TxnMarkerSenderOptions {
  brokerId: number;
  metadata: MetadataCache;
  /** inter.broker.listener.name */
  listener: string;
  /** request.timeout.ms of the coordinator's requests */
  requestTimeoutMs: number;
  /** Runs on each new connection (inter-broker SASL). */
  onConnect?: ConnectHook;
  /** TLS towards the inter-broker listener (SSL / SASL_SSL), else plaintext. */
  tls?: ConnectionOptions;
}

export class TxnMarkerSender {
  private readonly connections = new Map<number, BrokerConnection>();
  /** The last request queued per broker: a connection carries one request at a time. */
  private readonly tails = new Map<number, Promise<unknown>>();

  constructor(private readonly o: TxnMarkerSenderOptions) {}

  /**
   * Sends one WriteTxnMarkers request to `brokerId` (after the ones queued before it); rejects when
   * the broker is unknown, unreachable or does not answer in time.
   */
  send(brokerId: number, markers: WriteTxnMarkersRequestWritableTxnMarker[]): Promise<WriteTxnMarkersResponse> {
    const run = (this.tails.get(brokerId) ?? Promise.resolve()).then(
      () => this.sendNow(brokerId, markers),
      () => this.sendNow(brokerId, markers),
    );
    const tail = run.catch(() => undefined);
    this.tails.set(brokerId, tail);
    void tail.then(() => {
      if (this.tails.get(brokerId) === tail) this.tails.delete(brokerId);
    });
    return run;
  }

  private async sendNow(brokerId: number, markers: WriteTxnMarkersRequestWritableTxnMarker[]): Promise<WriteTxnMarkersResponse> {
    const e = this.o.metadata.endpoint(brokerId, this.o.listener);
    if (!e) throw new Error(`broker ${brokerId} has no ${this.o.listener} endpoint in the metadata`);
    let conn = this.connections.get(brokerId);
    if (conn && (conn.host !== e.host || conn.port !== e.port)) {
      conn.close();
      conn = undefined;
    }
    if (!conn) {
      conn = new BrokerConnection(e.host, e.port, `broker-${this.o.brokerId}-txn-markers`, this.o.requestTimeoutMs, this.o.onConnect, this.o.tls);
      this.connections.set(brokerId, conn);
    }
    return conn.send(API_KEYS.WriteTxnMarkers, WRITE_TXN_MARKERS_VERSION, { markers });
  }

  /** The coordinator's marker channel's sender: its entries as one request, the answer per partition. */
  readonly sendMarkers = async (brokerId: number, entries: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]> => {
    const markers: WriteTxnMarkersRequestWritableTxnMarker[] = entries.map((e) => {
      const byTopic = new Map<string, number[]>();
      for (const tp of e.partitions) {
        const list = byTopic.get(tp.topic);
        if (list) list.push(tp.partition);
        else byTopic.set(tp.topic, [tp.partition]);
      }
      return {
        producerId: e.producerId,
        producerEpoch: e.producerEpoch,
        transactionResult: e.result === TransactionResult.COMMIT,
        coordinatorEpoch: e.coordinatorEpoch,
        topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
      };
    });
    const r = await this.send(brokerId, markers);
    return r.markers.map((m) => ({
      producerId: m.producerId,
      partitions: m.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode }))),
    }));
  };

  close(): void {
    for (const c of this.connections.values()) c.close();
    this.connections.clear();
  }
}

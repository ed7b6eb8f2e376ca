/**
 * KafkaProducer: `send(record)` → Promise<RecordMetadata>, `flush()`, `close()`.
 *
 * send(): interceptors' onSend → wait for the topic's metadata (max.block.ms) → serialize key and
 * value → choose the partition (explicit, else the partitioner) → append to the accumulator (may
 * wait for buffer.memory, max.block.ms) → the Sender delivers the batch; the promise settles when
 * the broker acknowledges (or delivery fails), after the interceptors' onAcknowledgement.
 */
import { CompressionType, KafkaError } from '@samsa/protocol';
import { Cluster } from '../cluster.js';
import { silentLogger, type Logger } from '../logger.js';
import { RecordAccumulator, type AppendResult } from './accumulator.js';
import type { RecordHeaderBytes } from './batch.js';
import { resolveProducerConfig, type ProducerConfig, type ProducerConfigInput } from './config.js';
import { InterceptorChain, type ProducerInterceptor } from './interceptors.js';
import { ProducerMetadata } from './metadata.js';
import { createPartitioner, type Partitioner } from './partitioner.js';
import { Sender } from './sender.js';
import { bufferSerializer, type Serializer } from './serializers.js';
import { IdempotenceManager } from './idempotence.js';
import { TransactionManager, type ConsumerGroupMetadata, type TransactionOffset } from './transaction-manager.js';
import { notify, type Completion, type ProducerRecord, type RecordMetadata, type TopicPartitionInfo } from './types.js';

const COMPRESSION = {
  none: CompressionType.NONE,
  gzip: CompressionType.GZIP,
  snappy: CompressionType.SNAPPY,
  lz4: CompressionType.LZ4,
  zstd: CompressionType.ZSTD,
} as const;
const RECORD_BATCH_OVERHEAD = 61;

export class Producer<K = Buffer | string | null, V = Buffer | string | null> {
  readonly config: ProducerConfig;
  private readonly cluster: Cluster;
  private readonly metadata: ProducerMetadata;
  private readonly accumulator: RecordAccumulator;
  private readonly sender: Sender;
  private readonly idempotence: IdempotenceManager | undefined;
  private readonly transactions: TransactionManager | undefined;
  private readonly partitioner: Partitioner;
  private readonly keySerializer: Serializer<K>;
  private readonly valueSerializer: Serializer<V>;
  private readonly interceptors: InterceptorChain<K, V>;
  private readonly log: Logger;
  private readonly flushWaiters: Array<() => void> = [];
  private closed = false;
  /** Sends waiting for metadata, in send order. */
  private sendQueue: Promise<void> = Promise.resolve();
  private waitingSends = 0;

  constructor(input: ProducerConfigInput) {
    const cfg = resolveProducerConfig(input);
    this.config = cfg;
    this.log = (input.logger ?? silentLogger).child({ component: 'producer', clientId: cfg.clientId });
    this.cluster = new Cluster({
      bootstrapServers: cfg.bootstrapServers,
      clientId: cfg.clientId,
      requestTimeoutMs: cfg.requestTimeoutMs,
      retryBackoffMs: cfg.retryBackoffMs,
      retryBackoffMaxMs: cfg.retryBackoffMaxMs,
      metadataMaxAgeMs: cfg.metadataMaxAgeMs,
      defaultApiTimeoutMs: cfg.maxBlockMs,
      ...(input.tls ? { tls: input.tls } : {}),
      logger: input.logger,
      ...(input.sasl ? { sasl: input.sasl } : {}),
    });
    this.metadata = new ProducerMetadata(this.cluster, cfg.metadataMaxAgeMs, this.log);
    this.accumulator = new RecordAccumulator({
      batchSize: cfg.batchSize,
      lingerMs: cfg.lingerMs,
      bufferMemory: cfg.bufferMemory,
      compression: COMPRESSION[cfg.compressionType],
      maxBlockMs: cfg.maxBlockMs,
      transactional: cfg.transactionalId !== null,
    });
    this.idempotence = cfg.idempotence ? new IdempotenceManager() : undefined;
    this.transactions =
      cfg.transactionalId !== null
        ? new TransactionManager(
            this.cluster,
            this.idempotence!,
            {
              transactionalId: cfg.transactionalId,
              transactionTimeoutMs: cfg.transactionTimeoutMs,
              maxBlockMs: cfg.maxBlockMs,
              retryBackoffMs: cfg.retryBackoffMs,
              requestTimeoutMs: cfg.requestTimeoutMs,
            },
            this.log.child({ transactionalId: cfg.transactionalId }),
          )
        : undefined;
    this.sender = new Sender(cfg, this.cluster, this.metadata, this.accumulator, this.idempotence, this.log, this.transactions);
    if (this.transactions) this.transactions.onChange = () => this.sender.wakeup();
    this.sender.onIdle = () => {
      for (const w of this.flushWaiters.splice(0)) w();
    };
    this.partitioner = createPartitioner(cfg.partitioner, { ignoreKeys: cfg.ignoreKeys });
    this.keySerializer = (input['key.serializer'] ?? bufferSerializer) as Serializer<K>;
    this.valueSerializer = (input['value.serializer'] ?? bufferSerializer) as Serializer<V>;
    this.interceptors = new InterceptorChain((input['interceptor.classes'] ?? []) as ProducerInterceptor<K, V>[], (err, phase) =>
      this.log.warn({ err: (err as Error).message, phase }, 'interceptor failed'),
    );
  }

  /**
   * Kafka's buffer-available-bytes metric: buffer.memory not held by batches (a send that needs a
   * new batch waits, up to max.block.ms, while this is below batch.size).
   */
  get bufferAvailableBytes(): number {
    return this.accumulator.pool.availableMemory;
  }

  /** The producer id / epoch in use (idempotence), or -1. */
  get producerId(): { id: bigint; epoch: number } {
    return { id: this.idempotence?.producerId ?? -1n, epoch: this.idempotence?.producerEpoch ?? -1 };
  }

  /** The transaction state (Kafka's TransactionManager states), or undefined without transactional.id. */
  get transactionState(): TransactionManager['state'] | undefined {
    return this.transactions?.state;
  }

  /**
   * Kafka's initTransactions(): finds the transaction coordinator, gets the producer id and epoch
   * for transactional.id (fencing older producers of the id, completing their open transaction).
   * Once per producer, before the first transaction.
   */
  initTransactions(): Promise<void> {
    return this.requireTransactions('initTransactions').initTransactions();
  }

  /** Kafka's beginTransaction(): sends until commit or abort belong to the transaction. */
  beginTransaction(): void {
    this.requireTransactions('beginTransaction').beginTransaction();
  }

  /**
   * Kafka's sendOffsetsToTransaction(offsets, groupMetadata): the consumer group's offsets are
   * committed with the transaction (AddOffsetsToTxn, then TxnOffsetCommit to the group coordinator);
   * `groupMetadata` is the consumer's groupMetadata(), or just `{ groupId }`.
   */
  sendOffsetsToTransaction(offsets: readonly TransactionOffset[], groupMetadata: ConsumerGroupMetadata | string): Promise<void> {
    const group = typeof groupMetadata === 'string' ? { groupId: groupMetadata } : groupMetadata;
    return this.requireTransactions('sendOffsetsToTransaction').sendOffsetsToTransaction(offsets, group);
  }

  /** Kafka's commitTransaction(): flushes, then ends the transaction with EndTxn(commit). */
  commitTransaction(): Promise<void> {
    return this.requireTransactions('commitTransaction').commitTransaction(() => this.flush());
  }

  /**
   * Kafka's abortTransaction(): records not sent yet fail (TransactionAbortedError), the rest is
   * awaited, then EndTxn(abort). Also the way out of an abortable error.
   */
  abortTransaction(): Promise<void> {
    return this.requireTransactions('abortTransaction').abortTransaction(
      (err) => {
        this.accumulator.abortUndrained(err);
        this.sender.wakeup();
      },
      () => this.flush(),
    );
  }

  private requireTransactions(call: string): TransactionManager {
    if (!this.transactions)
      throw new KafkaError(
        'INVALID_TXN_STATE',
        `Cannot use transactional methods without enabling transactions by setting the transactional.id configuration property (${call})`,
      );
    if (this.closed) throw new KafkaError('UNKNOWN_SERVER_ERROR', 'Cannot perform operation after producer has been closed');
    return this.transactions;
  }

  /** Partitions of a topic (fetches metadata, waiting up to max.block.ms). */
  partitionsFor(topic: string): Promise<TopicPartitionInfo[]> {
    return this.metadata.waitOnMetadata(topic, this.config.maxBlockMs, this.config.retryBackoffMs);
  }

  /**
   * Sends a record; resolves with its metadata once acknowledged according to `acks`. With a
   * `callback` (Kafka's send(record, callback)) nothing is returned and the callback gets
   * (null, metadata) or (error, null): no promise per record, for senders of many records.
   */
  send(record: ProducerRecord<K, V>): Promise<RecordMetadata>;
  send(record: ProducerRecord<K, V>, callback: Completion): void;
  send(record: ProducerRecord<K, V>, callback?: Completion): Promise<RecordMetadata> | void {
    if (this.transactions && !this.closed) {
      try {
        this.transactions.checkSend();
      } catch (err) {
        if (callback) return notify(callback, err as Error, null);
        return Promise.reject(err as Error);
      }
    }
    if (callback) return this.sendWithCallback(record, callback);
    if (this.closed) return Promise.reject(new KafkaError('UNKNOWN_SERVER_ERROR', 'Cannot perform operation after producer has been closed'));
    const r = this.interceptors.empty ? record : this.interceptors.onSend(record);
    const p = this.doSend(r);
    if (this.interceptors.empty) return p;
    return p.then(
      (m) => {
        this.interceptors.onAcknowledgement(m, null);
        return m;
      },
      (err: Error) => {
        this.interceptors.onAcknowledgement(null, err);
        throw err;
      },
    );
  }

  private sendWithCallback(record: ProducerRecord<K, V>, callback: Completion): void {
    const known = this.closed || !this.interceptors.empty || this.waitingSends ? undefined : this.metadata.get(record.topic);
    if (!known || known.partitions.length === 0) {
      // the general path (closed, interceptors, metadata to wait for), settled into the callback
      this.send(record).then(
        (m) => notify(callback, null, m),
        (err: Error) => notify(callback, err, null),
      );
      return;
    }
    this.appendRecord(record, known.partitions, callback);
  }

  private doSend(record: ProducerRecord<K, V>): Promise<RecordMetadata> {
    const known = this.metadata.get(record.topic);
    if (!this.waitingSends && known && known.partitions.length > 0) return this.sendWithPartitions(record, known.partitions);
    // Java's send() blocks while metadata is missing: keep send order by queueing behind earlier waits
    this.waitingSends++;
    const turn = this.sendQueue.then(() => this.partitionsFor(record.topic));
    const appended = turn.then(
      (parts) => {
        const p = this.sendWithPartitions(record, parts);
        return { p };
      },
      (err: unknown) => ({ p: Promise.reject(err as Error) as Promise<RecordMetadata> }),
    );
    this.sendQueue = appended.then(
      () => undefined,
      () => undefined,
    );
    void this.sendQueue.then(() => this.waitingSends--);
    return appended.then((r) => r.p);
  }

  private sendWithPartitions(record: ProducerRecord<K, V>, partitions: readonly TopicPartitionInfo[]): Promise<RecordMetadata> {
    return new Promise<RecordMetadata>((resolve, reject) => this.appendRecord(record, partitions, (err, m) => (err ? reject(err) : resolve(m!))));
  }

  /** Serializes, partitions and appends a record; `callback` is called once with the outcome. */
  private appendRecord(record: ProducerRecord<K, V>, partitions: readonly TopicPartitionInfo[], callback: Completion): void {
    const { topic } = record;
    let key: Buffer | null;
    let value: Buffer | null;
    let headers: RecordHeaderBytes[] | null = null;
    try {
      key = this.keySerializer.serialize(topic, record.key as K);
      value = this.valueSerializer.serialize(topic, record.value);
      if (record.headers && record.headers.length > 0) {
        headers = record.headers.map((h) => ({
          key: Buffer.from(h.key, 'utf8'),
          value: h.value === null ? null : typeof h.value === 'string' ? Buffer.from(h.value, 'utf8') : h.value,
        }));
      }
    } catch (err) {
      return notify(
        callback,
        new KafkaError('INVALID_RECORD', `Can't serialize key/value of record to topic ${topic}: ${(err as Error).message}`, { cause: err }),
        null,
      );
    }
    const size = RECORD_BATCH_OVERHEAD + (key?.length ?? 0) + (value?.length ?? 0) + 32;
    if (size > this.config.maxRequestSize) {
      return notify(
        callback,
        new KafkaError(
          'MESSAGE_TOO_LARGE',
          `The message is ${size} bytes when serialized which is larger than ${this.config.maxRequestSize}, which is the value of the max.request.size configuration.`,
        ),
        null,
      );
    }
    if (size > this.config.bufferMemory) {
      return notify(
        callback,
        new KafkaError(
          'MESSAGE_TOO_LARGE',
          `The message is ${size} bytes when serialized which is larger than the total memory buffer you have configured with the buffer.memory configuration.`,
        ),
        null,
      );
    }
    let partition: number;
    const explicit = record.partition !== undefined && record.partition !== null;
    if (explicit) {
      partition = record.partition!;
      if (partition < 0 || partition >= partitions.length) {
        return notify(
          callback,
          new KafkaError(
            'UNKNOWN_TOPIC_OR_PARTITION',
            `Partition ${partition} of topic ${topic} with partition count ${partitions.length} is not present in metadata after ${this.config.maxBlockMs} ms.`,
          ),
          null,
        );
      }
    } else {
      partition = this.partitioner.partition(topic, key, partitions);
    }
    const timestamp = record.timestamp ?? Date.now();
    const sticky = !explicit && this.partitioner.onNewBatch !== undefined;
    try {
      this.transactions?.maybeAddPartition(topic, partition);
      const res = this.accumulator.append(topic, partition, timestamp, key, value, headers, callback, sticky);
      // the usual case, appended to an open batch, allocates nothing more
      if (res instanceof Promise || 'abortForNewBatch' in res) this.continueAppend(res, topic, partitions, partition, key, value, headers, timestamp, callback);
    } catch (err) {
      notify(callback, err as Error, null);
    }
  }

  /** After waiting for buffer memory, or when the sticky partition's batch is full. */
  private continueAppend(
    res: AppendResult | Promise<AppendResult>,
    topic: string,
    partitions: readonly TopicPartitionInfo[],
    partition: number,
    key: Buffer | null,
    value: Buffer | null,
    headers: RecordHeaderBytes[] | null,
    timestamp: number,
    callback: Completion,
  ): void {
    const fail = (err: Error): void => notify(callback, err, null);
    const onAppended = (r: AppendResult): void => {
      if (!('abortForNewBatch' in r)) return;
      // the sticky partition's batch is full: pick another partition, then append there
      this.partitioner.onNewBatch!(topic, partitions, partition);
      const next = this.partitioner.partition(topic, key, partitions);
      this.transactions?.maybeAddPartition(topic, next);
      const again = this.accumulator.append(topic, next, timestamp, key, value, headers, callback, false);
      if (again instanceof Promise) again.catch(fail);
    };
    if (res instanceof Promise) res.then(onAppended).catch(fail);
    else {
      try {
        onAppended(res);
      } catch (err) {
        fail(err as Error);
      }
    }
  }

  /** Sends everything buffered and waits until every record sent so far is acknowledged or failed. */
  async flush(): Promise<void> {
    // sends still waiting for their topic's metadata count too (Java's send() blocks until it is
    // known, so they are in the accumulator before flush or close is called)
    while (this.waitingSends > 0) await this.sendQueue;
    if (this.sender.idle) return;
    this.accumulator.beginFlush();
    try {
      await new Promise<void>((resolve) => {
        this.flushWaiters.push(resolve);
        this.sender.wakeup();
      });
    } finally {
      this.accumulator.endFlush();
    }
  }

  /**
   * Closes the producer: by default waits for buffered records to be delivered (Kafka's close()
   * without timeout); with `timeoutMs` the records still undelivered then fail.
   */
  async close(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    const tm = this.transactions;
    if (tm?.inTransaction && !tm.hasFatalError && opts.timeoutMs === undefined) {
      // Kafka's sender aborts an incomplete transaction when the producer closes
      this.log.info({ transactionalId: tm.transactionalId }, 'Aborting incomplete transaction due to shutdown');
      await this.abortTransaction().catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'abort on close failed'));
    }
    this.closed = true;
    this.accumulator.closing = true;
    const flushed = this.flush();
    if (opts.timeoutMs !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([flushed, new Promise<void>((r) => (timer = setTimeout(r, opts.timeoutMs)))]);
      clearTimeout(timer);
    } else {
      await flushed;
    }
    this.sender.stop();
    this.accumulator.abortAll(new KafkaError('UNKNOWN_SERVER_ERROR', 'Producer is closed forcefully.'));
    this.partitioner.close?.();
    this.interceptors.close();
    await this.cluster.close();
  }
}

/**
 * LogManager: the broker's log.dirs (Kafka's LogManager).
 *
 * Per log dir:
 *   meta.properties                    version=0, broker.id, cluster.id (when known)
 *   recovery-point-offset-checkpoint   offsets up to which each log is fsynced
 *   log-start-offset-checkpoint        log start offsets above the first segment's base offset
 *   cleaner-offset-checkpoint          first dirty offset of each compacted log (the log cleaner's)
 *   .kafka_cleanshutdown               written after a clean shutdown, deleted once the logs loaded
 *   <topic>-<partition>/               one Log each
 *   <topic>-<partition>.<uuid>-delete/ deleted partitions, removed after file.delete.delay.ms
 *
 * Loads every partition at startup (bounded parallelism), runs retention and checkpoint tasks and
 * the log cleaner (`../cleaner/`, for cleanup.policy=compact), and flushes, checkpoints and marks a
 * clean shutdown on `shutdown()`. As in Kafka, the cleaner pauses a partition while it is truncated
 * or deleted, and runs retention of compacted logs itself.
 */
import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import { parseProperties } from '@samsa/server-common';
import { access, mkdir, readFile, readdir, rename, rm, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import { forEachBounded } from '@samsa/server-common';
import { OffsetCheckpointFile, deferredFlushes, pendingDeferredFlushes, writeFileAtomically, type TopicPartitionOffset } from '../checkpoint.js';
import { backgroundEpochWrites } from '../leader-epoch-cache.js';
import { systemClock, validateLogConfig, type Clock, type LogConfig } from '../config.js';
import { InconsistentBrokerIdError, InconsistentClusterIdError, InconsistentTopicIdError, KafkaStorageError } from '../errors.js';
import { DEFAULT_CLEANER_CONFIG, type CleanerConfig } from '../cleaner/cleaner-types.js';
import { LogCleaner } from '../cleaner/log-cleaner.js';
import { Log, type TruncationListener } from '../log.js';
import { DEFAULT_MAX_OPEN_INDEX_FILES, OpenIndexFiles } from '../open-index-files.js';
import { deleteDirName, parsePartitionDirName } from '../topic-partition.js';

export const META_PROPERTIES_FILE = 'meta.properties';
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT_FILE = 'replication-offset-checkpoint';
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
export const PARTITION_METADATA_FILE = 'partition.metadata';
const TEMP_FILE_SUFFIX = '.tmp';

/** Kafka's `partition.metadata` (KIP-516): `version: 0` and `topic_id: <base64 uuid>`. */
export function formatPartitionMetadata(topicId: string): string {
  return `version: 0\ntopic_id: ${topicId}\n`;
}

export interface LogManagerOptions {
  /** log.dirs */
  logDirs: readonly string[];
  /** broker.id, checked against and written to meta.properties. */
  brokerId: number;
  /** The cluster id, when already known (see `setClusterId`). */
  clusterId?: string | undefined;
  /** Broker-level log defaults. */
  defaultConfig: LogConfig;
  /** Effective config of a topic (topic overrides over the defaults); default `defaultConfig`. */
  configFor?: (topic: string) => LogConfig;
  clock?: Clock;
  logger?: Logger;
  /** Partitions loaded (and flushed at shutdown) at once per log dir (the broker derives it from num.recovery.threads.per.data.dir). Default 4. */
  recoveryConcurrency?: number;
  /** log.retention.check.interval.ms. Default 300000. */
  retentionCheckIntervalMs?: number;
  /** log.flush.offset.checkpoint.interval.ms. Default 60000. */
  recoveryPointCheckpointIntervalMs?: number;
  /** log.flush.start.offset.checkpoint.interval.ms. Default 60000. */
  logStartOffsetCheckpointIntervalMs?: number;
  /** The log cleaner's settings (log.cleaner.*). Default: Kafka's defaults, enabled. */
  cleanerConfig?: CleanerConfig;
  /** Logger of the log cleaner; default a child of `logger` with component log-cleaner. */
  cleanerLogger?: Logger;
  /** Index file descriptors kept open across all logs (Samsa's log.index.open.files.max). Default 4096. */
  maxOpenIndexFiles?: number;
}

/** meta.properties and partition.metadata: Java properties files. */
export function parseMetaProperties(text: string): Map<string, string> {
  return parseProperties(text);
}

export function formatMetaProperties(brokerId: number, clusterId: string | undefined, now = new Date()): string {
  const lines = ['#', `#${now.toString()}`];
  if (clusterId !== undefined) lines.push(`cluster.id=${clusterId}`);
  lines.push('version=0', `broker.id=${brokerId}`);
  return `${lines.join('\n')}\n`;
}

const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

interface DirState {
  path: string;
  hadCleanShutdown: boolean;
  recoveryCheckpoint: OffsetCheckpointFile;
  startCheckpoint: OffsetCheckpointFile;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export class LogManager {
  private readonly logs = new Map<string, { log: Log; dir: DirState }>();
  private readonly creating = new Map<string, Promise<Log>>();
  /** Dir chosen for each log being created (counted when placing the next one). */
  private readonly reserved = new Map<string, DirState>();
  /** Logs plus creations in flight per log dir, kept as they change (counting them per creation was O(logs)). */
  private readonly partitionsInDir = new Map<DirState, number>();

  private countIn(d: DirState, delta: number): void {
    this.partitionsInDir.set(d, (this.partitionsInDir.get(d) ?? 0) + delta);
  }
  private readonly dirs: DirState[];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly pendingDirDeletes = new Map<string, { timer: NodeJS.Timeout; done: Promise<void> }>();
  private running = new Set<Promise<unknown>>();
  private retentionRunning = false;
  private clusterIdValue: string | undefined;
  private shutDown = false;
  private cleanerValue: LogCleaner | null = null;
  /** The log cleaner pauses a partition around its truncations. */
  private readonly truncationListener: TruncationListener = {
    beforeTruncation: async (log) => {
      await this.cleanerValue?.manager.abortAndPauseCleaning(log.topicPartition);
    },
    afterTruncation: async (log) => {
      const m = this.cleanerValue?.manager;
      if (!m) return;
      await m.maybeTruncateCheckpoint(dirname(log.dir), log.topicPartition, log.activeSegment.baseOffset);
      m.resumeCleaning([log.topicPartition]);
    },
  };
  private readonly clock: Clock;
  private readonly log: Logger;
  /** The cap on open index descriptors shared by every log's segments. */
  readonly indexFiles: OpenIndexFiles;

  private constructor(private readonly opts: LogManagerOptions) {
    this.clock = opts.clock ?? systemClock;
    this.indexFiles = new OpenIndexFiles(opts.maxOpenIndexFiles ?? DEFAULT_MAX_OPEN_INDEX_FILES);
    this.log = (opts.logger ?? pino({ enabled: false })).child({ component: 'log-manager' });
    this.clusterIdValue = opts.clusterId;
    const paths = [...new Set(opts.logDirs.map((d) => resolve(d)))];
    if (paths.length === 0) throw new RangeError('log.dirs is empty');
    this.dirs = paths.map((path) => ({
      path,
      hadCleanShutdown: false,
      recoveryCheckpoint: new OffsetCheckpointFile(join(path, RECOVERY_POINT_CHECKPOINT_FILE)),
      startCheckpoint: new OffsetCheckpointFile(join(path, LOG_START_OFFSET_CHECKPOINT_FILE)),
    }));
  }

  /** Creates and validates the log dirs, then loads every partition in them. */
  static async open(opts: LogManagerOptions): Promise<LogManager> {
    validateLogConfig(opts.defaultConfig);
    const m = new LogManager(opts);
    for (const d of m.dirs) await m.initDir(d);
    await Promise.all(m.dirs.map((d) => m.loadDir(d)));
    const cleanerConfig = opts.cleanerConfig ?? DEFAULT_CLEANER_CONFIG;
    if (cleanerConfig.enableCleaner) {
      m.cleanerValue = await LogCleaner.open({
        config: cleanerConfig,
        logDirs: m.logDirs,
        logs: () => m.allLogs(),
        clock: m.clock,
        logger: opts.cleanerLogger ?? (opts.logger ?? pino({ enabled: false })).child({ component: 'log-cleaner' }),
      });
    }
    return m;
  }

  /** The log cleaner (null when log.cleaner.enable is false). */
  get cleaner(): LogCleaner | null {
    return this.cleanerValue;
  }

  get clusterId(): string | undefined {
    return this.clusterIdValue;
  }
  get logDirs(): string[] {
    return this.dirs.map((d) => d.path);
  }
  /** Whether `dir` had `.kafka_cleanshutdown` when the manager opened it. */
  hadCleanShutdown(dir: string): boolean {
    return this.dirs.find((d) => d.path === resolve(dir))?.hadCleanShutdown ?? false;
  }

  private configFor(topic: string): LogConfig {
    return this.opts.configFor?.(topic) ?? this.opts.defaultConfig;
  }

  // ---- log dirs and meta.properties --------------------------------------------------------

  private async initDir(d: DirState): Promise<void> {
    try {
      await mkdir(d.path, { recursive: true });
      await this.checkMetaProperties(d.path);
      await this.writeMetaProperties(d.path);
    } catch (err) {
      if (err instanceof InconsistentBrokerIdError || err instanceof InconsistentClusterIdError) throw err;
      throw new KafkaStorageError(`Failed to initialise log dir ${d.path}`, { cause: err });
    }
  }

  private async checkMetaProperties(dir: string): Promise<void> {
    let text: string;
    try {
      text = await readFile(join(dir, META_PROPERTIES_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const props = parseMetaProperties(text);
    const version = props.get('version');
    if (version !== '0')
      throw new KafkaStorageError(`${join(dir, META_PROPERTIES_FILE)} has version ${version ?? '(none)'}; only version 0 (ZooKeeper mode) is supported`);
    const brokerId = props.get('broker.id');
    if (brokerId !== undefined && Number(brokerId) !== this.opts.brokerId) {
      throw new InconsistentBrokerIdError(
        `Configured broker.id ${this.opts.brokerId} doesn't match stored broker.id ${brokerId} in ${join(dir, META_PROPERTIES_FILE)}. ` +
          'If you moved your data, make sure your configured broker.id matches.',
      );
    }
    const clusterId = props.get('cluster.id');
    if (clusterId !== undefined) {
      if (this.clusterIdValue !== undefined && clusterId !== this.clusterIdValue) {
        throw new InconsistentClusterIdError(
          `The cluster id ${this.clusterIdValue} doesn't match stored cluster id ${clusterId} in ${join(dir, META_PROPERTIES_FILE)}`,
        );
      }
      this.clusterIdValue ??= clusterId;
    }
  }

  private writeMetaProperties(dir: string): Promise<void> {
    return writeFileAtomically(join(dir, META_PROPERTIES_FILE), formatMetaProperties(this.opts.brokerId, this.clusterIdValue));
  }

  /** Records the cluster id (from ZooKeeper) in every dir's meta.properties; a different stored id is an error. */
  async setClusterId(clusterId: string): Promise<void> {
    if (this.clusterIdValue !== undefined && this.clusterIdValue !== clusterId) {
      throw new InconsistentClusterIdError(`The cluster id ${clusterId} doesn't match the stored cluster id ${this.clusterIdValue}`);
    }
    this.clusterIdValue = clusterId;
    for (const d of this.dirs) await this.writeMetaProperties(d.path);
  }

  // ---- loading -----------------------------------------------------------------------------

  private async loadDir(d: DirState): Promise<void> {
    const started = this.clock.now();
    const marker = join(d.path, CLEAN_SHUTDOWN_FILE);
    d.hadCleanShutdown = await exists(marker);
    const recoveryPoints = await d.recoveryCheckpoint.read().catch((err: unknown) => {
      this.log.warn({ dir: d.path, err }, 'error reading recovery-point-offset-checkpoint; recovering all logs from offset 0');
      return new Map<string, bigint>();
    });
    const startOffsets = await d.startCheckpoint.read().catch((err: unknown) => {
      this.log.warn({ dir: d.path, err }, 'error reading log-start-offset-checkpoint; using segment base offsets');
      return new Map<string, bigint>();
    });
    const toLoad: { name: string; tp: TopicPartition }[] = [];
    for (const ent of await readdir(d.path, { withFileTypes: true })) {
      if (ent.isFile() && ent.name.endsWith(TEMP_FILE_SUFFIX)) {
        // A checkpoint or meta.properties write cut short by a crash (partition dirs: the log loader).
        this.log.info({ dir: d.path, file: ent.name }, 'deleting stray temporary file');
        await unlink(join(d.path, ent.name)).catch(() => undefined);
      }
      if (!ent.isDirectory()) continue;
      const parsed = parsePartitionDirName(ent.name);
      if (!parsed) {
        this.log.warn({ dir: d.path, name: ent.name }, 'ignoring directory that is not a partition directory');
      } else if (parsed.kind === 'delete') {
        this.scheduleDirDelete(join(d.path, ent.name));
      } else if (parsed.kind !== 'log') {
        this.log.warn({ dir: d.path, name: ent.name }, `ignoring ${parsed.kind} partition directory (not supported)`);
      } else {
        toLoad.push({ name: ent.name, tp: { topic: parsed.topic, partition: parsed.partition } });
      }
    }
    await forEachBounded(toLoad, this.opts.recoveryConcurrency ?? 4, async ({ name, tp }) => {
      const key = topicPartitionKey(tp);
      const log = await Log.open({
        dir: join(d.path, name),
        topicPartition: tp,
        config: this.configFor(tp.topic),
        clock: this.clock,
        logger: this.opts.logger ?? this.log,
        recoveryPoint: recoveryPoints.get(key) ?? 0n,
        logStartOffset: startOffsets.get(key),
        hadCleanShutdown: d.hadCleanShutdown,
        truncationListener: this.truncationListener,
        indexFiles: this.indexFiles,
      }).catch((err: unknown) => {
        throw new KafkaStorageError(`Failed to load log ${key} in ${d.path}`, { cause: err });
      });
      const dup = this.logs.get(key);
      if (dup) {
        await log.close();
        throw new KafkaStorageError(`Duplicate log directories for ${key} are found in both ${dup.log.dir} and ${log.dir}`);
      }
      this.logs.set(key, { log, dir: d });
      this.countIn(d, 1);
    });
    if (d.hadCleanShutdown) await unlink(marker).catch(() => undefined);
    this.log.info({ dir: d.path, logs: toLoad.length, hadCleanShutdown: d.hadCleanShutdown, ms: this.clock.now() - started }, 'loaded logs in log dir');
  }

  // ---- logs --------------------------------------------------------------------------------

  getLog(tp: TopicPartition): Log | undefined {
    return this.logs.get(topicPartitionKey(tp))?.log;
  }

  allLogs(): Log[] {
    return [...this.logs.values()].map((e) => e.log);
  }

  /**
   * Returns the partition's log, creating it in the dir with the fewest partitions if needed. With
   * `topicId`, `partition.metadata` is written (or checked: a different stored id is an error).
   */
  async getOrCreateLog(tp: TopicPartition, config?: LogConfig, topicId?: string): Promise<Log> {
    const key = topicPartitionKey(tp);
    let log = this.logs.get(key)?.log;
    if (!log) {
      let inFlight = this.creating.get(key);
      if (!inFlight) {
        inFlight = this.createLog(tp, config).finally(() => this.creating.delete(key));
        this.creating.set(key, inFlight);
      }
      log = await inFlight;
    }
    if (topicId !== undefined) await this.checkTopicId(log, topicId);
    return log;
  }

  /**
   * The topic id of each open log, once read from `partition.metadata` or given (and written with the
   * log's first record): a LeaderAndIsr
   * for a partition this broker already has is checked in memory (Kafka keeps the id on the log)
   * instead of reading the file again.
   */
  private readonly knownTopicIds = new WeakMap<Log, string>();
  /** Logs created in a directory made for them, whose `partition.metadata` cannot exist yet. */
  private readonly newLogs = new WeakSet<Log>();

  private async checkTopicId(log: Log, topicId: string): Promise<void> {
    const path = join(log.dir, PARTITION_METADATA_FILE);
    const known = this.knownTopicIds.get(log);
    if (known === topicId) return;
    if (known !== undefined) throw new InconsistentTopicIdError(`Topic id ${topicId} does not match the id ${known} of the log in ${log.dir}`);
    let text: string | null = null;
    try {
      if (!this.newLogs.has(log)) text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const stored = text === null ? undefined : parseMetaProperties(text).get('topic_id');
    if (stored === undefined) {
      // written before the log's first record (as Kafka flushes it before any log data,
      // maybeFlushMetadataFile), not on the LeaderAndIsr path: a broker creating 10,000 partitions
      // creates 10,000 fewer files, and a log that never holds a record needs none (a recreated
      // topic of the same name may take over an empty log: it has nothing of the old topic in it)
      const content = formatPartitionMetadata(topicId);
      log.beforeNextAppend(() => writeFileAtomically(path, content));
    } else if (stored !== topicId) {
      throw new InconsistentTopicIdError(`Topic id ${topicId} does not match the id ${stored} stored in ${path}`);
    }
    this.knownTopicIds.set(log, topicId);
  }

  /** The topic id in the partition's `partition.metadata`, if any. */
  async topicIdOf(tp: TopicPartition): Promise<string | undefined> {
    const log = this.getLog(tp);
    if (!log) return undefined;
    try {
      return parseMetaProperties(await readFile(join(log.dir, PARTITION_METADATA_FILE), 'utf8')).get('topic_id');
    } catch {
      return undefined;
    }
  }

  private async createLog(tp: TopicPartition, config?: LogConfig): Promise<Log> {
    if (this.shutDown) throw new KafkaStorageError('Log manager is shut down');
    if (!LEGAL_TOPIC.test(tp.topic) || tp.topic === '.' || tp.topic === '..') throw new RangeError(`Illegal topic name "${tp.topic}"`);
    if (!Number.isInteger(tp.partition) || tp.partition < 0) throw new RangeError(`Illegal partition ${tp.partition}`);
    // The dir with the fewest partitions (Kafka's nextLogDirs), counting creations in flight.
    let d = this.dirs[0] as DirState;
    for (const x of this.dirs) if ((this.partitionsInDir.get(x) ?? 0) < (this.partitionsInDir.get(d) ?? 0)) d = x;
    const key = topicPartitionKey(tp);
    this.reserved.set(key, d);
    this.countIn(d, 1);
    try {
      return await this.createLogIn(d, tp, key, config);
    } finally {
      this.reserved.delete(key);
      this.countIn(d, -1);
    }
  }

  private async createLogIn(d: DirState, tp: TopicPartition, key: string, config?: LogConfig): Promise<Log> {
    const dir = join(d.path, key);
    // a directory made now is empty (a new partition): nothing to list or read, in Log.open nor
    // for its partition.metadata; one left from before (a crash mid-creation) is loaded as usual
    const made = (await mkdir(dir, { recursive: true })) !== undefined;
    const log = await Log.open({
      dir,
      topicPartition: tp,
      config: config ?? this.configFor(tp.topic),
      clock: this.clock,
      logger: this.opts.logger ?? this.log,
      hadCleanShutdown: true,
      truncationListener: this.truncationListener,
      indexFiles: this.indexFiles,
      newDirectory: made,
    });
    if (made) this.newLogs.add(log);
    this.logs.set(key, { log, dir: d });
    this.countIn(d, 1);
    this.log.info({ topic: tp.topic, partition: tp.partition, dir }, 'created log');
    return log;
  }

  /** Applies a topic's new config to its loaded logs. */
  async updateTopicConfig(topic: string, config: LogConfig): Promise<void> {
    for (const { log } of this.logs.values()) if (log.topicPartition.topic === topic) await log.updateConfig(config);
  }

  /**
   * Deletes a partition: closes its log, renames the dir to `<topic>-<p>.<uuid>-delete`, drops it
   * from the checkpoints and removes the dir after file.delete.delay.ms. False if there is no such log.
   */
  async asyncDelete(tp: TopicPartition): Promise<boolean> {
    const key = topicPartitionKey(tp);
    const entry = this.logs.get(key);
    if (!entry) return false;
    this.logs.delete(key);
    this.countIn(entry.dir, -1);
    await this.cleanerValue?.manager.abortCleaning(tp);
    await entry.log.close();
    const target = join(entry.dir.path, deleteDirName(tp));
    await rename(entry.log.dir, target);
    this.log.info({ topic: tp.topic, partition: tp.partition, dir: target }, 'log renamed for deletion');
    await this.checkpointDir(entry.dir);
    await this.cleanerValue?.manager.removePartition(entry.dir.path, tp);
    this.scheduleDirDelete(target);
    return true;
  }

  /** `asyncDelete` for callers that do not care whether the log existed. */
  async deleteLog(tp: TopicPartition): Promise<void> {
    await this.asyncDelete(tp);
  }

  private scheduleDirDelete(path: string): void {
    if (this.pendingDirDeletes.has(path)) return;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const timer = setTimeout(() => {
      void rm(path, { recursive: true, force: true })
        .then(() => this.log.info({ dir: path }, 'deleted log dir'))
        .catch((err: unknown) => this.log.error({ dir: path, err }, 'failed to delete log dir'))
        .finally(() => {
          this.pendingDirDeletes.delete(path);
          resolveDone();
        });
    }, this.opts.defaultConfig.fileDeleteDelayMs);
    timer.unref();
    this.pendingDirDeletes.set(path, { timer, done });
  }

  /** Resolves once every scheduled directory deletion has run. */
  async awaitPendingDeletes(): Promise<void> {
    await Promise.all([...this.pendingDirDeletes.values()].map((p) => p.done));
  }

  // ---- checkpoints -------------------------------------------------------------------------

  private logsIn(d: DirState): Log[] {
    return [...this.logs.values()].filter((e) => e.dir === d).map((e) => e.log);
  }

  async checkpointRecoveryOffsets(): Promise<void> {
    for (const d of this.dirs) await this.checkpointRecoveryOffsetsIn(d);
  }

  async checkpointLogStartOffsets(): Promise<void> {
    for (const d of this.dirs) await this.checkpointLogStartOffsetsIn(d);
  }

  private async checkpointDir(d: DirState): Promise<void> {
    await this.checkpointRecoveryOffsetsIn(d);
    await this.checkpointLogStartOffsetsIn(d);
  }

  private checkpointRecoveryOffsetsIn(d: DirState): Promise<void> {
    const entries: TopicPartitionOffset[] = this.logsIn(d).map((l) => ({ ...l.topicPartition, offset: l.recoveryPoint }));
    return d.recoveryCheckpoint.write(entries);
  }

  /** Only logs whose start offset is above their first segment's base offset (as Kafka). */
  private checkpointLogStartOffsetsIn(d: DirState): Promise<void> {
    const entries: TopicPartitionOffset[] = this.logsIn(d)
      .filter((l) => l.segments.length > 0 && l.logStartOffset > (l.segments[0] as { baseOffset: bigint }).baseOffset)
      .map((l) => ({ ...l.topicPartition, offset: l.logStartOffset }));
    return d.startCheckpoint.write(entries);
  }

  // ---- background tasks --------------------------------------------------------------------

  /** Starts retention and checkpoint tasks and the log cleaner. */
  startup(): void {
    this.cleanerValue?.startup();
    const every = (ms: number, name: string, task: () => Promise<unknown>): void => {
      let busy = false;
      const t = setInterval(() => {
        if (busy || this.shutDown) return;
        busy = true;
        const p = task()
          .catch((err: unknown) => this.log.error({ err, task: name }, 'log manager task failed'))
          .finally(() => {
            busy = false;
            this.running.delete(p);
          });
        this.running.add(p);
      }, ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.opts.retentionCheckIntervalMs ?? 300_000, 'retention', () => this.cleanupLogs());
    every(this.opts.recoveryPointCheckpointIntervalMs ?? 60_000, 'recovery-point-checkpoint', () => this.checkpointRecoveryOffsets());
    every(this.opts.logStartOffsetCheckpointIntervalMs ?? 60_000, 'log-start-offset-checkpoint', () => this.checkpointLogStartOffsets());
  }

  /**
   * One retention pass; returns the number of segments deleted. While the log cleaner runs, it
   * deletes old segments of compacted logs itself, and the non-compacted logs are paused for the
   * cleaner meanwhile (a topic may switch to compact during the pass), as in Kafka.
   */
  async cleanupLogs(): Promise<number> {
    if (this.retentionRunning) return 0;
    this.retentionRunning = true;
    const started = this.clock.now();
    let total = 0;
    const cleaner = this.cleanerValue?.isActive ? this.cleanerValue.manager : null;
    const logs = cleaner ? cleaner.pauseCleaningForNonCompactedPartitions() : this.allLogs();
    try {
      for (const log of logs) {
        try {
          total += await log.deleteOldSegments();
        } catch (err) {
          this.log.error({ err, topic: log.topicPartition.topic, partition: log.topicPartition.partition }, 'retention failed for log');
        }
      }
    } finally {
      cleaner?.resumeCleaning(logs.map((l) => l.topicPartition));
      this.retentionRunning = false;
    }
    this.log.debug({ segmentsDeleted: total, ms: this.clock.now() - started }, 'log cleanup completed');
    return total;
  }

  /** Stops tasks, flushes and closes every log, writes checkpoints and the clean shutdown marker. */
  async shutdown(): Promise<void> {
    if (this.shutDown) return;
    this.shutDown = true;
    await this.cleanerValue?.shutdown();
    for (const t of this.timers) clearInterval(t);
    await Promise.allSettled([...this.running]);
    await Promise.allSettled([...this.creating.values()]);
    for (const p of this.pendingDirDeletes.values()) clearTimeout(p.timer);
    this.pendingDirDeletes.clear();
    let failed = false;
    const started = performance.now();
    // what the background still had to write when the shutdown began (it is waited for below)
    const backlog = { epochCheckpoints: backgroundEpochWrites(), deferredFsyncs: pendingDeferredFlushes() };
    await forEachBounded(this.allLogs(), this.opts.recoveryConcurrency ?? 4, async (log) => {
      try {
        await log.flush();
        await log.close();
      } catch (err) {
        failed = true;
        this.log.error({ err, topic: log.topicPartition.topic, partition: log.topicPartition.partition }, 'error flushing log at shutdown');
      }
    });
    const closed = performance.now();
    // checkpoints written with a deferred fsync are durable before the clean-shutdown marker
    await deferredFlushes();
    const synced = performance.now();
    for (const d of this.dirs) {
      await this.checkpointDir(d);
      if (!failed) await writeFileAtomically(join(d.path, CLEAN_SHUTDOWN_FILE), '');
    }
    this.log.info(
      {
        logs: this.logs.size,
        clean: !failed,
        backlogAtStart: backlog,
        closeMs: Math.round(closed - started),
        deferredFsyncMs: Math.round(synced - closed),
        checkpointMs: Math.round(performance.now() - synced),
      },
      'log manager shut down',
    );
  }
}

/**
 * LogCleaner (Kafka's): log.cleaner.threads async loops, each with its own offset map, that pick the
 * filthiest compacted log, clean it, run retention over the compacted logs, and sleep
 * log.cleaner.backoff.ms when there was nothing to clean. `shutdown` aborts cleanings in progress at
 * their next check and waits for the loops to end.
 */
import { topicPartitionKey } from '@samsa/protocol';
import type { TopicPartition } from '@samsa/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../config.js';
import type { Log } from '../log.js';
import { Cleaner } from './cleaner.js';
import { CleanerManager } from './cleaner-manager.js';
import { LogCleaningAbortedError, type CleanerConfig } from './cleaner-types.js';
import { SkimpyOffsetMap } from './offset-map.js';
import { Throttler } from './throttler.js';

export interface LogCleanerOptions {
  config: CleanerConfig;
  logDirs: readonly string[];
  logs: () => Iterable<Log>;
  clock: Clock;
  logger: Logger;
}

const MAX_MAP_MEMORY = 0x7fffffff;

export class LogCleaner {
  private running = false;
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private readonly wakers = new Set<() => void>();
  private readonly cleaners: Cleaner[] = [];
  private readonly log: Logger;

  private constructor(
    private readonly o: LogCleanerOptions,
    /** States and checkpoints; used by the log manager around retention, truncation and deletion. */
    readonly manager: CleanerManager,
  ) {
    this.log = o.logger;
    const c = o.config;
    const threads = Math.max(1, c.numThreads);
    const throttler = new Throttler(c.maxIoBytesPerSecond, () => o.clock.now());
    for (let id = 0; id < threads; id++) {
      this.cleaners.push(
        new Cleaner({
          id,
          offsetMap: new SkimpyOffsetMap(Math.min(Math.floor(c.dedupeBufferSize / threads), MAX_MAP_MEMORY)),
          ioBufferSize: Math.max(1024, Math.floor(c.ioBufferSize / threads / 2)),
          dupBufferLoadFactor: c.dedupeBufferLoadFactor,
          throttler,
          clock: o.clock,
          logger: o.logger.child({ cleaner: id }),
          checkDone: (l) => this.manager.checkCleaningAborted(l),
        }),
      );
    }
  }

  static async open(o: LogCleanerOptions): Promise<LogCleaner> {
    const holder: { cleaner?: LogCleaner } = {};
    const manager = await CleanerManager.open({ logDirs: o.logDirs, logs: o.logs, logger: o.logger, isRunning: () => !(holder.cleaner?.stopped ?? false) });
    holder.cleaner = new LogCleaner(o, manager);
    return holder.cleaner;
  }

  /** Starts the cleaning loops (none when log.cleaner.threads is 0). */
  startup(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.log.info({ threads: this.o.config.numThreads }, 'starting the log cleaner');
    for (let i = 0; i < this.o.config.numThreads; i++) this.loops.push(this.loop(this.cleaners[i] as Cleaner));
  }

  /** Whether loops are cleaning (retention of compacted logs is theirs then). */
  get isActive(): boolean {
    return this.running && !this.stopped && this.o.config.numThreads > 0;
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.log.info('shutting down the log cleaner');
    this.stopped = true;
    for (const w of this.wakers) w();
    await Promise.allSettled(this.loops);
  }

  private async loop(cleaner: Cleaner): Promise<void> {
    while (!this.stopped) {
      let cleaned = false;
      try {
        cleaned = await this.cleanFilthiestLog(cleaner);
      } catch (err) {
        this.log.error({ err }, 'log cleaner loop failed');
      }
      if (!cleaned && !this.stopped) await this.sleep(this.o.config.backoffMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      this.wakers.add(wake);
    });
  }

  /**
   * One pass (Kafka's cleanFilthiestLog): cleans the filthiest compacted log if one needs it, then
   * deletes old segments of the compacted logs. Returns whether a log was cleaned. Usable directly
   * (tests) when the loops are not running.
   */
  async cleanFilthiestLog(cleaner: Cleaner = this.cleaners[0] as Cleaner): Promise<boolean> {
    const ltc = await this.manager.grabFilthiestCompactedLog(this.o.clock.now());
    let cleaned = false;
    if (ltc) {
      cleaned = true;
      const log = ltc.log;
      const fields = { topic: log.topicPartition.topic, partition: log.topicPartition.partition };
      let endOffset = ltc.firstDirtyOffset;
      try {
        const r = await cleaner.clean(ltc);
        endOffset = r.endOffset;
        this.log.info({ ...fields, from: ltc.firstDirtyOffset.toString(), to: endOffset.toString(), ...r.stats.summary() }, 'cleaned log');
      } catch (err) {
        if (err instanceof LogCleaningAbortedError) {
          this.log.info({ ...fields, reason: err.message }, 'log cleaning aborted');
        } else {
          this.log.error({ ...fields, err }, 'unexpected error while cleaning log; marking the partition uncleanable');
          this.manager.markPartitionUncleanable(log);
        }
      } finally {
        await this.manager.doneCleaning(log, endOffset);
      }
    }
    const deletable = this.manager.deletableLogs();
    try {
      for (const log of deletable) {
        try {
          await log.deleteOldSegments();
        } catch (err) {
          this.log.error({ err, topic: log.topicPartition.topic, partition: log.topicPartition.partition }, 'failed to delete old segments of a compacted log');
        }
      }
    } finally {
      this.manager.doneDeleting(deletable);
    }
    return cleaned;
  }

  /** Kafka's awaitCleaned: polls the checkpoint of `tp` until it reaches `offset`. */
  async awaitCleaned(tp: TopicPartition, offset: bigint, maxWaitMs = 60_000): Promise<boolean> {
    const deadline = Date.now() + maxWaitMs;
    const key = topicPartitionKey(tp);
    for (;;) {
      if ((this.manager.allCleanerCheckpoints().get(key) ?? -1n) >= offset) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

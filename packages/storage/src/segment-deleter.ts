/**
 * Kafka's asynchronous segment deletion: segment files are renamed with the `.deleted` suffix right
 * away (so a crash leaves files the loader removes) and closed and unlinked after
 * file.delete.delay.ms, so reads already holding a slice of them can finish.
 */
import type { Logger } from 'pino';
import { DELETED_FILE_SUFFIX } from './config.js';
import type { LogSegment } from './segment.js';

interface Pending {
  timer: NodeJS.Timeout | null;
  started: boolean;
  done: Promise<void>;
  run: () => Promise<void>;
}

export class SegmentDeleter {
  private readonly pending = new Set<Pending>();

  constructor(
    private readonly logger: Logger,
    /** Awaited before files are closed (e.g. a flush that may still touch them). */
    private readonly beforeDelete: () => Promise<unknown> = () => Promise.resolve(),
  ) {}

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Renames the segments' files to `.deleted` now; closes and removes them after `delayMs`. */
  async schedule(segments: readonly LogSegment[], delayMs: number): Promise<void> {
    if (segments.length === 0) return;
    for (const s of segments) await s.changeFileSuffixes('', DELETED_FILE_SUFFIX);
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const entry: Pending = {
      timer: null,
      started: false,
      done,
      run: async () => {
        if (entry.timer) clearTimeout(entry.timer);
        entry.timer = null;
        // stays pending until the files are gone, so awaitAll also waits for a deletion under way
        if (entry.started) return done;
        entry.started = true;
        try {
          await this.beforeDelete();
          for (const s of segments) await s.deleteFiles();
          this.logger.info({ segments: segments.map((s) => s.baseOffset.toString()) }, 'deleted segment files');
        } catch (err) {
          this.logger.error({ err }, 'failed to delete segment files');
        } finally {
          this.pending.delete(entry);
          resolve();
        }
      },
    };
    this.pending.add(entry);
    entry.timer = setTimeout(() => void entry.run(), delayMs);
    entry.timer.unref();
  }

  /** Resolves when every scheduled deletion has run. */
  async awaitAll(): Promise<void> {
    await Promise.all([...this.pending].map((p) => p.done));
  }

  /** Runs every scheduled deletion now. */
  async runAll(): Promise<void> {
    await Promise.all([...this.pending].map((p) => p.run()));
  }
}

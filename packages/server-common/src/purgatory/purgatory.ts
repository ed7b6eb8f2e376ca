import type { SystemTimer, TimerTask, TimerTaskEntry } from './timing-wheel.js';

/**
 * Kafka's DelayedOperation: completes either when `tryComplete` finds its condition met (checked
 * when it is created and whenever an event on one of its keys happens) or when it expires.
 * `onComplete` runs exactly once either way.
 */
export abstract class DelayedOperation implements TimerTask {
  readonly expirationMs: number;
  entry?: TimerTaskEntry | undefined;
  private completed = false;
  timer: SystemTimer | undefined;

  constructor(delayMs: number) {
    this.expirationMs = Date.now() + Math.max(0, delayMs);
  }

  get isCompleted(): boolean {
    return this.completed;
  }

  /** Checks the condition; calls `forceComplete()` and returns true when it holds. */
  abstract tryComplete(): boolean;
  protected abstract onComplete(): void;
  protected abstract onExpiration(): void;

  /** Completes now (once); false if someone else already did. */
  forceComplete(): boolean {
    if (this.completed) return false;
    this.completed = true;
    this.timer?.cancel(this);
    this.onComplete();
    return true;
  }

  /** The timer fired: expire then complete. */
  run(): void {
    if (this.completed) return;
    this.onExpiration();
    this.forceComplete();
  }
}

/**
 * Kafka's DelayedOperationPurgatory: operations watched under keys (partitions); an event on a key
 * re-checks that key's operations; completed ones are dropped from the watcher lists (and purged in
 * bulk once enough accumulate).
 */
export class DelayedOperationPurgatory<T extends DelayedOperation> {
  private readonly watchers = new Map<string, Set<T>>();
  private estimatedWatched = 0;

  constructor(
    readonly name: string,
    private readonly timer: SystemTimer,
    private readonly purgeInterval = 1000,
  ) {}

  /** Watch entries, completed ones not yet purged included (Kafka's PurgatorySize). */
  get watched(): number {
    return this.estimatedWatched;
  }

  /** Pending operations (delayed, not completed). */
  get delayed(): number {
    const pending = new Set<T>();
    for (const set of this.watchers.values()) for (const op of set) if (!op.isCompleted) pending.add(op);
    return pending.size;
  }

  /** Completes at once if possible, else watches `keys` and arms the expiration timer. */
  tryCompleteElseWatch(op: T, keys: string[]): boolean {
    if (op.tryComplete()) return true;
    for (const k of keys) {
      if (op.isCompleted) break;
      let set = this.watchers.get(k);
      if (!set) {
        set = new Set();
        this.watchers.set(k, set);
      }
      set.add(op);
      this.estimatedWatched++;
    }
    // checked again after watching: an event may have happened in between (Kafka does the same)
    if (op.tryComplete()) return true;
    if (!op.isCompleted) {
      op.timer = this.timer;
      this.timer.add(op);
    }
    if (this.estimatedWatched > this.purgeInterval) this.purgeCompleted();
    return false;
  }

  /** An event on `key` (e.g. HW moved): completes what can be completed; returns how many it completed. */
  checkAndComplete(key: string): number {
    const set = this.watchers.get(key);
    if (!set) return 0;
    let done = 0;
    for (const op of set) {
      // already completed elsewhere (another key, the timeout): just forget it
      if (op.isCompleted) {
        set.delete(op);
        this.estimatedWatched--;
      } else if (op.tryComplete()) {
        set.delete(op);
        this.estimatedWatched--;
        done++;
      }
    }
    if (set.size === 0) this.watchers.delete(key);
    return done;
  }

  private purgeCompleted(): void {
    let n = 0;
    for (const [k, set] of this.watchers) {
      for (const op of set) if (op.isCompleted) set.delete(op);
      if (set.size === 0) this.watchers.delete(k);
      n += set.size;
    }
    this.estimatedWatched = n;
  }

  /** Completes everything (shutdown). */
  shutdown(): void {
    for (const set of this.watchers.values()) for (const op of set) op.forceComplete();
    this.watchers.clear();
  }
}

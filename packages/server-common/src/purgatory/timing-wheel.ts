/**
 * Kafka's hierarchical timing wheel (its TimingWheel + DelayQueue): tasks go into the bucket
 * (TimerTaskList) of the wheel level whose span covers their delay — O(1) when the bucket exists;
 * a new bucket is put into the delay queue (a heap ordered by bucket expiration, O(log n)); when the
 * earliest bucket expires the clock advances to it and its tasks run or drop to a finer wheel.
 * In Node the delay queue is a heap plus one timer armed for its head.
 */

export interface TimerTask {
  /** Absolute expiration in ms. */
  readonly expirationMs: number;
  run(): void;
  /** Set by the timer; a cancelled task is removed from its bucket. */
  entry?: TimerTaskEntry | undefined;
}

export class TimerTaskEntry {
  list: TimerTaskList | undefined;
  prev: TimerTaskEntry | undefined;
  next: TimerTaskEntry | undefined;
  constructor(readonly task: TimerTask) {
    task.entry = this;
  }
  get cancelled(): boolean {
    return this.task.entry !== this;
  }
  remove(): void {
    this.list?.remove(this);
  }
}

/** A bucket: a doubly linked list of entries sharing one expiration slot. */
export class TimerTaskList {
  private head: TimerTaskEntry | undefined;
  private count = 0;
  /** Bucket expiration (slot start), -1 when not queued. */
  expiration = -1;

  get size(): number {
    return this.count;
  }

  add(e: TimerTaskEntry): void {
    e.remove();
    e.list = this;
    e.prev = undefined;
    e.next = this.head;
    if (this.head) this.head.prev = e;
    this.head = e;
    this.count++;
  }

  remove(e: TimerTaskEntry): void {
    if (e.list !== this) return;
    if (e.prev) e.prev.next = e.next;
    else this.head = e.next;
    if (e.next) e.next.prev = e.prev;
    e.list = e.prev = e.next = undefined;
    this.count--;
  }

  /** Removes every entry and hands it to `f` (re-insert or run). */
  flush(f: (e: TimerTaskEntry) => void): void {
    let e = this.head;
    this.head = undefined;
    this.count = 0;
    this.expiration = -1;
    while (e) {
      const next = e.next;
      e.list = e.prev = e.next = undefined;
      f(e);
      e = next;
    }
  }
}

/** A min-heap of buckets by expiration (Kafka's DelayQueue). */
class BucketQueue {
  private readonly heap: TimerTaskList[] = [];
  get size(): number {
    return this.heap.length;
  }
  peek(): TimerTaskList | undefined {
    return this.heap[0];
  }
  push(b: TimerTaskList): void {
    const h = this.heap;
    h.push(b);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.expiration <= h[i]!.expiration) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }
  pop(): TimerTaskList | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]!.expiration < h[m]!.expiration) m = l;
        if (r < h.length && h[r]!.expiration < h[m]!.expiration) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}

/** One level of the wheel: `wheelSize` buckets of `tickMs`; an overflow wheel covers longer delays. */
export class TimingWheel {
  private readonly buckets: TimerTaskList[];
  private readonly interval: number;
  private currentTime: number;
  private overflow: TimingWheel | undefined;

  constructor(
    private readonly tickMs: number,
    private readonly wheelSize: number,
    startMs: number,
    private readonly queue: BucketQueue,
  ) {
    this.interval = tickMs * wheelSize;
    this.currentTime = startMs - (startMs % tickMs);
    this.buckets = Array.from({ length: wheelSize }, () => new TimerTaskList());
  }

  /** Adds an entry; false when it is already due (the caller runs it). */
  add(e: TimerTaskEntry): boolean {
    const exp = e.task.expirationMs;
    if (e.cancelled) return false;
    if (exp < this.currentTime + this.tickMs) return false;
    if (exp < this.currentTime + this.interval) {
      const virtualId = Math.floor(exp / this.tickMs);
      const bucket = this.buckets[virtualId % this.wheelSize]!;
      bucket.add(e);
      const slot = virtualId * this.tickMs;
      if (bucket.expiration !== slot) {
        // a bucket (re)used for a new slot enters the delay queue: the O(log n) case
        bucket.expiration = slot;
        this.queue.push(bucket);
      }
      return true;
    }
    this.overflow ??= new TimingWheel(this.interval, this.wheelSize, this.currentTime, this.queue);
    return this.overflow.add(e);
  }

  advanceClock(timeMs: number): void {
    if (timeMs >= this.currentTime + this.tickMs) {
      this.currentTime = timeMs - (timeMs % this.tickMs);
      this.overflow?.advanceClock(this.currentTime);
    }
  }
}

/**
 * Kafka's SystemTimer: the wheel (tickMs 1, wheelSize 20 by default) plus the bucket queue, driven
 * by one Node timer armed for the earliest bucket.
 */
export class SystemTimer {
  private readonly queue = new BucketQueue();
  private readonly wheel: TimingWheel;
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private tasks = 0;

  constructor(
    tickMs = 1,
    wheelSize = 20,
    private readonly now: () => number = Date.now,
  ) {
    this.wheel = new TimingWheel(tickMs, wheelSize, now(), this.queue);
  }

  /** Pending (not yet run or cancelled) tasks. */
  get size(): number {
    return this.tasks;
  }

  add(task: TimerTask): void {
    const e = new TimerTaskEntry(task);
    this.tasks++;
    if (!this.wheel.add(e)) this.runEntry(e);
    this.arm();
  }

  /** Removes a task that completed before expiring. */
  cancel(task: TimerTask): void {
    const e = task.entry;
    if (!e) return;
    if (e.list) {
      e.remove();
      this.tasks--;
    }
    task.entry = undefined;
  }

  private runEntry(e: TimerTaskEntry): void {
    if (e.cancelled) return;
    this.tasks--;
    e.task.entry = undefined;
    e.task.run();
  }

  private arm(): void {
    const head = this.queue.peek();
    if (!head) return;
    if (head.expiration >= this.armedFor && this.timer) return;
    clearTimeout(this.timer);
    this.armedFor = head.expiration;
    this.timer = setTimeout(() => this.tick(), Math.max(0, head.expiration - this.now()));
    this.timer.unref();
  }

  /** Advances through every expired bucket: run due tasks, re-insert the rest into finer wheels. */
  private tick(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.now();
    for (let b = this.queue.peek(); b && b.expiration <= now; b = this.queue.peek()) {
      this.queue.pop();
      if (b.expiration < 0) continue; // already flushed
      this.wheel.advanceClock(b.expiration);
      b.flush((e) => {
        if (e.cancelled) {
          this.tasks--;
          return;
        }
        if (!this.wheel.add(e)) this.runEntry(e);
      });
    }
    this.arm();
  }

  shutdown(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * Kafka's BufferPool: `buffer.memory` bytes shared by all batches. Buffers of exactly `batch.size`
 * are kept on a free list and reused; an allocation that does not fit waits (FIFO) until memory is
 * freed, at most `max.block.ms`, then fails as Kafka's BufferExhaustedException.
 */
import { KafkaError } from '@samsa/protocol';

interface Waiter {
  size: number;
  resolve: (b: Buffer) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class BufferExhaustedError extends KafkaError {
  constructor(message: string) {
    super('REQUEST_TIMED_OUT', message);
    this.name = 'BufferExhaustedError';
  }
}

export class BufferPool {
  private readonly free: Buffer[] = [];
  /** Memory not handed out and not on the free list. */
  private nonPooled: number;
  private readonly waiters: Waiter[] = [];

  constructor(
    readonly totalMemory: number,
    readonly poolableSize: number,
  ) {
    this.nonPooled = totalMemory;
  }

  /** Bytes that could be allocated right now. */
  get availableMemory(): number {
    return this.nonPooled + this.free.length * this.poolableSize;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** A buffer of `size` bytes: immediately when memory allows, else after waiting up to maxBlockMs. */
  allocate(size: number, maxBlockMs: number): Buffer | Promise<Buffer> {
    if (size > this.totalMemory) {
      throw new KafkaError('MESSAGE_TOO_LARGE', `Attempt to allocate ${size} bytes, but there is a hard limit of ${this.totalMemory} on memory allocations.`);
    }
    if (this.waiters.length === 0) {
      const b = this.tryAllocate(size);
      if (b) return b;
    }
    return new Promise<Buffer>((resolve, reject) => {
      const waiter: Waiter = {
        size,
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(
            new BufferExhaustedError(
              `Failed to allocate ${size} bytes within the configured max blocking time ${maxBlockMs} ms. Total memory: ${this.totalMemory} bytes. Available memory: ${this.availableMemory} bytes. Poolable size: ${this.poolableSize} bytes`,
            ),
          );
          this.serveWaiters();
        }, maxBlockMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Returns a buffer's memory (`size`: what was allocated). */
  deallocate(buf: Buffer, size = buf.length): void {
    if (size === this.poolableSize && buf.length === this.poolableSize) this.free.push(buf);
    else this.nonPooled += size;
    this.serveWaiters();
  }

  private tryAllocate(size: number): Buffer | undefined {
    if (size === this.poolableSize && this.free.length > 0) return this.free.pop()!;
    // free pooled buffers until the request fits
    while (this.nonPooled < size && this.free.length > 0) {
      this.free.pop();
      this.nonPooled += this.poolableSize;
    }
    if (this.nonPooled < size) return undefined;
    this.nonPooled -= size;
    return Buffer.allocUnsafe(size);
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0) {
      const w = this.waiters[0]!;
      const b = this.tryAllocate(w.size);
      if (!b) return;
      this.waiters.shift();
      clearTimeout(w.timer);
      w.resolve(b);
    }
  }
}

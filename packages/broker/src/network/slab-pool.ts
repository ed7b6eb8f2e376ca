/**
 * Buffers for responses that live until their socket write completes (Fetch record data): carved
 * from shared slabs by bumping an offset, as Node's own Buffer pool does for buffers under 4 KiB.
 * A Buffer of 4 KiB or more from `Buffer.allocUnsafe` costs a malloc, a new ArrayBuffer and its
 * sweeping by the garbage collector; from a slab it costs a view. A slab is never handed out twice:
 * its memory is freed by the garbage collector once no view of it is left, so a buffer stays valid
 * for as long as anything holds it. Requests larger than a quarter of a slab get their own Buffer.
 * The price is that a live view keeps its whole slab: a response stuck behind a client that does
 * not read pins at most one slab (64 KiB by default) besides its own bytes.
 */
export class SlabPool {
  private slab: Buffer;
  private offset = 0;

  constructor(private readonly slabSize = 64 * 1024) {
    this.slab = Buffer.allocUnsafeSlow(slabSize);
  }

  /** An uninitialized buffer of `size` bytes. */
  take(size: number): Buffer {
    if (size > this.slabSize >>> 2) return Buffer.allocUnsafe(size);
    if (this.offset + size > this.slabSize) {
      this.slab = Buffer.allocUnsafeSlow(this.slabSize);
      this.offset = 0;
    }
    const b = this.slab.subarray(this.offset, this.offset + size);
    // 8-byte aligned, as Node's pool keeps its buffers
    this.offset = (this.offset + size + 7) & ~7;
    return b;
  }
}

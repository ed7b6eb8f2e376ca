import { ProtocolDecodeError } from '@samsa/protocol';

/**
 * Splits a byte stream into Kafka frames (INT32 size prefix, then the frame). Returns each frame
 * without its prefix; a frame inside one chunk is a view of that chunk (no copy).
 */
export class FrameSplitter {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Size of the frame being assembled, or -1 while its prefix is incomplete. */
  private need = -1;

  constructor(private readonly maxFrameBytes: number = 100 * 1024 * 1024) {}

  /** Bytes received but not yet returned as frames. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Adds bytes; returns the frames they complete. Throws ProtocolDecodeError on an invalid size. */
  push(chunk: Buffer): Buffer[] {
    if (chunk.length === 0) return [];
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: Buffer[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < 4) break;
        const size = this.head().readInt32BE(0);
        if (size < 0 || size > this.maxFrameBytes) {
          throw new ProtocolDecodeError(`invalid frame size ${size} (limit ${this.maxFrameBytes})`, 0);
        }
        this.need = size;
      }
      if (this.buffered < 4 + this.need) break;
      const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
      out.push(buf.subarray(4, 4 + this.need));
      const rest = buf.subarray(4 + this.need);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      this.need = -1;
    }
    return out;
  }

  private head(): Buffer {
    if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0]!;
  }
}

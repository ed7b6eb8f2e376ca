/**
 * Test support shared by the coordinators: an in-memory coordinator topic (`CoordinatorLog`)
 * whose appends can fail or be held and whose reads can be gated.
 */
import { ErrorCode, RecordBatch, setBaseOffset } from '@samsa/protocol';
import type { CoordinatorLog } from '../coordinator-log.js';

export class MemoryCoordinatorLog implements CoordinatorLog {
  readonly batches = new Map<number, Buffer[]>();
  private readonly leo = new Map<number, bigint>();
  /** Partitions this "broker" leads. */
  readonly leaders = new Set<number>();
  /** The next appends fail with these codes, in order. */
  readonly nextErrors: number[] = [];
  /** Appends are written but their acks wait for `release()`. */
  hold = false;
  private held: Array<() => void> = [];
  /** Reads wait for this promise (a load in progress). */
  readGate: Promise<void> | null = null;
  readonly appends: Array<{ partition: number; acks: number; timeoutMs: number }> = [];

  /** The next append fails with this code (once). */
  set nextError(code: number) {
    this.nextErrors.push(code);
  }

  hasLog(p: number): boolean {
    return this.leaders.has(p) || this.batches.has(p);
  }

  async append(p: number, records: Buffer, acks: number, timeoutMs: number): Promise<{ errorCode: number; baseOffset: bigint }> {
    this.appends.push({ partition: p, acks, timeoutMs });
    if (!this.leaders.has(p)) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1n };
    const err = this.nextErrors.shift();
    if (err !== undefined) return { errorCode: err, baseOffset: -1n };
    const base = this.write(p, records);
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    return { errorCode: ErrorCode.NONE, baseOffset: base };
  }

  get heldAppends(): number {
    return this.held.length;
  }

  release(): void {
    const h = this.held;
    this.held = [];
    for (const r of h) r();
  }

  logStartOffset(p: number): bigint | undefined {
    return this.hasLog(p) ? 0n : undefined;
  }

  leaderLogEndOffset(p: number): bigint {
    return this.leaders.has(p) ? (this.leo.get(p) ?? 0n) : -1n;
  }

  async read(p: number, offset: bigint, _maxBytes: number): Promise<Buffer> {
    if (this.readGate) await this.readGate;
    const list = (this.batches.get(p) ?? []).filter((b) => new RecordBatch(b).nextOffset > offset);
    return Buffer.concat(list);
  }

  /** Stores a batch at the log end (also: records an earlier coordinator wrote); returns its base offset. */
  write(p: number, records: Buffer): bigint {
    const base = this.leo.get(p) ?? 0n;
    const copy = Buffer.from(records);
    setBaseOffset(copy, base);
    const list = this.batches.get(p) ?? [];
    list.push(copy);
    this.batches.set(p, list);
    this.leo.set(p, new RecordBatch(copy).nextOffset);
    return base;
  }
}

/**
 * Test support for the group coordinator: an in-memory `__consumer_offsets` (OffsetsLog) whose
 * appends can fail or be held, and promise wrappers around the coordinator's callbacks.
 */
import pino from 'pino';
import { ErrorCode, RecordBatch, recordBatches, setBaseOffset } from '@samsa/protocol';
import { GroupCoordinator, type GroupConfig } from './group-coordinator.js';
import type { OffsetsLog } from './group-metadata-manager.js';
import { decodeGroupMetadataValue, decodeKey, decodeOffsetCommitValue, type CoordinatorKey } from './records.js';

export class MemoryOffsetsLog implements OffsetsLog {
  readonly batches = new Map<number, Buffer[]>();
  private readonly leo = new Map<number, bigint>();
  /** Partitions this "broker" leads. */
  readonly leaders = new Set<number>();
  /** The next append fails with this code (once). */
  nextError: number | null = null;
  /** Appends are written but their acks wait for `release()`. */
  hold = false;
  private held: Array<() => void> = [];
  /** Reads wait for this promise (a load in progress). */
  readGate: Promise<void> | null = null;
  appends = 0;

  hasLog(p: number): boolean {
    return this.leaders.has(p) || this.batches.has(p);
  }

  async append(p: number, records: Buffer, _acks: number, _timeoutMs: number): Promise<{ errorCode: number; baseOffset: bigint }> {
    this.appends++;
    if (!this.leaders.has(p)) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1n };
    if (this.nextError !== null) {
      const errorCode = this.nextError;
      this.nextError = null;
      return { errorCode, baseOffset: -1n };
    }
    const base = this.leo.get(p) ?? 0n;
    const copy = Buffer.from(records);
    setBaseOffset(copy, base);
    const list = this.batches.get(p) ?? [];
    list.push(copy);
    this.batches.set(p, list);
    this.leo.set(p, new RecordBatch(copy).nextOffset);
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    return { errorCode: ErrorCode.NONE, baseOffset: base };
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

  /** Every record of partition `p`, decoded. */
  records(p = 0): Array<{ offset: bigint; key: CoordinatorKey; value: unknown }> {
    const out: Array<{ offset: bigint; key: CoordinatorKey; value: unknown }> = [];
    for (const b of recordBatches(Buffer.concat(this.batches.get(p) ?? []))) {
      for (const r of b) {
        const key = decodeKey(r.key!);
        const value =
          r.value === null
            ? null
            : key.type === 'offset'
              ? decodeOffsetCommitValue(r.value)
              : key.type === 'group'
                ? decodeGroupMetadataValue(r.value)
                : r.value;
        out.push({ offset: r.offset, key, value });
      }
    }
    return out;
  }
}

/** A callback result that arrives later. */
export class Pending<T> {
  value: T | undefined;
  readonly promise: Promise<T>;
  private resolveFn!: (v: T) => void;
  constructor() {
    this.promise = new Promise<T>((r) => (this.resolveFn = r));
  }
  readonly callback = (v: T): void => {
    if (this.value !== undefined) throw new Error('callback invoked twice');
    this.value = v;
    this.resolveFn(v);
  };
  get done(): boolean {
    return this.value !== undefined;
  }
}

/** A consumer-protocol subscription (v0) to `topics`. */
export function subscription(topics: string[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0, 0]), Buffer.alloc(4)];
  parts[1]!.writeInt32BE(topics.length);
  for (const t of topics) {
    const b = Buffer.from(t);
    const len = Buffer.alloc(2);
    len.writeInt16BE(b.length);
    parts.push(len, b);
  }
  parts.push(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  return Buffer.concat(parts);
}

/**
 * A started coordinator over `storage` (one offsets partition, 0, led here in epoch 0; offset
 * metadata up to 10 characters; no expiration timer).
 */
export async function startTestCoordinator(storage: OffsetsLog, groupConfig: GroupConfig): Promise<GroupCoordinator> {
  const c = new GroupCoordinator({
    brokerId: 1,
    groupConfig,
    offsetConfig: {
      maxMetadataSize: 10,
      loadBufferSize: 1 << 20,
      offsetsRetentionMs: 7 * 24 * 3600_000,
      offsetsRetentionCheckIntervalMs: 600_000,
      offsetCommitTimeoutMs: 5000,
      compression: 0,
    },
    storage,
    logger: pino({ enabled: false }),
    partitionCount: 1,
  });
  c.startup(1, false);
  await c.onElection(0, 0);
  return c;
}

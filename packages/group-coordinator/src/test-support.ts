/**
 * Test support for the group coordinator: an in-memory `__consumer_offsets` (OffsetsLog) whose
 * appends can fail or be held, and promise wrappers around the coordinator's callbacks.
 */
import pino from 'pino';
import { recordBatches } from '@samsa/protocol';
import { MemoryCoordinatorLog } from '@samsa/server-common/testing';
import { GroupCoordinator, type GroupConfig } from './group-coordinator.js';
import type { OffsetsLog } from './group-metadata-manager.js';
import { decodeGroupMetadataValue, decodeKey, decodeOffsetCommitValue, type CoordinatorKey } from './records.js';

/** An in-memory `__consumer_offsets` that decodes its records for assertions. */
export class MemoryOffsetsLog extends MemoryCoordinatorLog {
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

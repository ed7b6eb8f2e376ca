/**
 * The coordinator loads the same groups and offsets from a compacted `__consumer_offsets` log as
 * from the uncompacted one: offset commits, group metadata, and the tombstones written when a group
 * is deleted or an offset expires, compacted by the real log cleaner on a real log.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import pino from 'pino';
import { CompressionType, encodeRecordBatch, ErrorCode, topicPartitionKey } from '@samsa/protocol';
import { Log, logConfig } from '@samsa/storage';
import { ManualClock, cleanLog, makeCleaner, makeTempDir } from '@samsa/storage/testing';
import {
  GroupCoordinator,
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
  type OffsetsLog,
} from '@samsa/group-coordinator';

/** `__consumer_offsets` partition 0 on a real Log. */
class LogOffsetsLog implements OffsetsLog {
  constructor(readonly log: Log) {}
  hasLog(): boolean {
    return true;
  }
  async append(_p: number, records: Buffer): Promise<{ errorCode: number; baseOffset: bigint }> {
    const info = await this.log.appendAsLeader(records, 0);
    this.log.updateHighWatermark(this.log.logEndOffset);
    return { errorCode: ErrorCode.NONE, baseOffset: info.firstOffset };
  }
  logStartOffset(): bigint {
    return this.log.logStartOffset;
  }
  leaderLogEndOffset(): bigint {
    return this.log.logEndOffset;
  }
  async read(_p: number, offset: bigint, maxBytes: number): Promise<Buffer> {
    return (await this.log.read(offset, maxBytes, undefined, true)).records.read();
  }
}

let dir: string;
let cleanup: () => Promise<void>;
let clock: ManualClock;
const closers: Array<() => Promise<unknown>> = [];
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-offsets-compaction-'));
  clock = new ManualClock(Date.now());
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await cleanup();
});

const GROUPS = ['g0', 'g1', 'g2', 'g3'];
const PARTITIONS = [0, 1, 2, 3];

async function load(storage: OffsetsLog): Promise<{ groups: string[]; offsets: Record<string, Record<string, string>> }> {
  const c = new GroupCoordinator({
    brokerId: 1,
    groupConfig: { groupMinSessionTimeoutMs: 1000, groupMaxSessionTimeoutMs: 60_000, groupMaxSize: 10, groupInitialRebalanceDelayMs: 0 },
    offsetConfig: {
      maxMetadataSize: 100,
      loadBufferSize: 4096,
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
  const listed = c.handleListGroups(new Set(), new Set());
  const offsets: Record<string, Record<string, string>> = {};
  for (const g of GROUPS) {
    const r = c.handleFetchOffsets(g, false, null);
    offsets[g] = Object.fromEntries(r.offsets.map(([tp, d]) => [topicPartitionKey(tp), `${d.offset}/${d.metadata}`]));
  }
  await c.shutdown();
  return { groups: listed.groups.map((g) => g.groupId).sort(), offsets };
}

const batch = (records: Array<{ key: Buffer; value: Buffer | null }>): Buffer =>
  encodeRecordBatch({ records, baseTimestamp: clock.now(), compression: CompressionType.GZIP });

describe('coordinator on a compacted log', () => {
  test('coordinator – groups, offsets and tombstones load the same from a compacted __consumer_offsets log', async () => {
    const log = await Log.open({
      dir: join(dir, '__consumer_offsets-0'),
      topicPartition: { topic: '__consumer_offsets', partition: 0 },
      config: logConfig({ compact: true, segmentBytes: 4096, fileDeleteDelayMs: 0, retentionMs: -1, deleteRetentionMs: 60_000 }),
      clock,
    });
    closers.push(() => log.close());
    const storage = new LogOffsetsLog(log);
    for (let round = 0; round < 60; round++) {
      for (const g of GROUPS) {
        const records = PARTITIONS.map((p) => ({
          key: encodeOffsetCommitKey(g, 'orders', p),
          value: encodeOffsetCommitValue({
            committedOffset: BigInt(round * 100 + p),
            leaderEpoch: 0,
            metadata: `r${round}`,
            commitTimestampMs: clock.now(),
            expireTimestampMs: null,
          }),
        }));
        if (round % 10 === 0) {
          records.push({
            key: encodeGroupMetadataKey(g),
            value: encodeGroupMetadataValue({
              protocolType: 'consumer',
              generation: round,
              protocol: 'range',
              leader: null,
              currentStateTimestamp: clock.now(),
              members: [],
            }),
          });
        }
        await storage.append(0, batch(records));
      }
    }
    // g1 is deleted (group and offset tombstones); g2's offset of partition 3 expires
    await storage.append(
      0,
      batch([{ key: encodeGroupMetadataKey('g1'), value: null }, ...PARTITIONS.map((p) => ({ key: encodeOffsetCommitKey('g1', 'orders', p), value: null }))]),
    );
    await storage.append(0, batch([{ key: encodeOffsetCommitKey('g2', 'orders', 3), value: null }]));
    // more commits of the others so the tombstones leave the active segment
    for (let round = 60; round < 80; round++) {
      for (const g of ['g0', 'g3']) {
        await storage.append(
          0,
          batch(
            PARTITIONS.map((p) => ({
              key: encodeOffsetCommitKey(g, 'orders', p),
              value: encodeOffsetCommitValue({
                committedOffset: BigInt(round * 100 + p),
                leaderEpoch: 0,
                metadata: `r${round}`,
                commitTimestampMs: clock.now(),
                expireTimestampMs: null,
              }),
            })),
          ),
        );
      }
    }
    const expected = await load(storage);
    expect(expected.groups).toEqual(['g0', 'g2', 'g3']);
    expect(expected.offsets.g1).toEqual({});
    expect(expected.offsets.g2).toEqual({ 'orders-0': '5900/r59', 'orders-1': '5901/r59', 'orders-2': '5902/r59' });
    expect(expected.offsets.g0?.['orders-2']).toBe('7902/r79');

    const sizeBefore = log.size;
    const cleaner = makeCleaner(clock);
    const first = await cleanLog(cleaner, log, clock);
    expect(log.size).toBeLessThan(sizeBefore / 4);
    expect(await load(storage)).toEqual(expected);

    // past delete.retention.ms the tombstones themselves go; the load is still the same
    clock.advance(61_000);
    for (let round = 80; round < 100; round++) {
      await storage.append(
        0,
        batch(
          PARTITIONS.map((p) => ({
            key: encodeOffsetCommitKey('g0', 'orders', p),
            value: encodeOffsetCommitValue({
              committedOffset: BigInt(round * 100 + p),
              leaderEpoch: 0,
              metadata: `r${round}`,
              commitTimestampMs: clock.now(),
              expireTimestampMs: null,
            }),
          })),
        ),
      );
    }
    await cleanLog(cleaner, log, clock, first.endOffset);
    const again = await load(storage);
    expect(again.groups).toEqual(expected.groups);
    expect(again.offsets.g1).toEqual({});
    expect(again.offsets.g2).toEqual(expected.offsets.g2);
    expect(again.offsets.g3).toEqual(expected.offsets.g3);
    expect(again.offsets.g0?.['orders-2']).toBe('9902/r99');
  });
});

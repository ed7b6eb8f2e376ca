/**
 * The value versions of `__consumer_offsets` records follow inter.broker.protocol.version, as
 * Kafka's GroupMetadataManager.groupMetadataValue / offsetCommitValue pick them, so tools that
 * only know older schemas (Burrow 1.2 reads group metadata up to v2) can decode what Samsa writes.
 * The written bytes are checked against golden layouts built from Kafka's GroupMetadataValue and
 * OffsetCommitValue schemas, independently of records.ts's encoders.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { recordBatches } from '@samsa/protocol';
import { parseMetadataVersion } from '@samsa/server-common';
import { GroupMetadata, GroupState } from './group-metadata.js';
import { GroupMetadataManager } from './group-metadata-manager.js';
import { MemberMetadata } from './member-metadata.js';
import type { OffsetAndMetadata } from './records.js';
import { MemoryOffsetsLog, Pending, subscription } from './test-support.js';

const NOW = 1_700_000_000_000;
const SUB = subscription(['t']);
const ASSIGNMENT = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]);

// golden field encodings (Kafka's non-flexible schemas: int16-length strings, int32-length bytes)
const i16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const i64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const str = (s: string | null) => (s === null ? i16(-1) : Buffer.concat([i16(Buffer.byteLength(s)), Buffer.from(s)]));
const bytes = (b: Buffer) => Buffer.concat([i32(b.length), b]);

/** GroupMetadataValue of the test group (one member m1, static id "inst") at `version`, field by field. */
function goldenGroup(version: number): Buffer {
  return Buffer.concat([
    i16(version),
    str('consumer'), // protocolType
    i32(1), // generation
    str('range'), // protocol
    str('m1'), // leader
    ...(version >= 2 ? [i64(BigInt(NOW))] : []), // currentStateTimestamp (v2+)
    i32(1), // members
    str('m1'), // memberId
    ...(version >= 3 ? [str('inst')] : []), // groupInstanceId (v3+)
    str('client'), // clientId
    str('/127.0.0.1'), // clientHost
    ...(version >= 1 ? [i32(300_000)] : []), // rebalanceTimeout (v1+)
    i32(10_000), // sessionTimeout
    bytes(SUB), // subscription
    bytes(ASSIGNMENT), // assignment
  ]);
}

/** OffsetCommitValue of offset 42 at `version`. */
function goldenOffset(version: number, expire = -1n): Buffer {
  return Buffer.concat([
    i16(version),
    i64(42n), // offset
    ...(version >= 3 ? [i32(5)] : []), // leaderEpoch (v3+)
    str('meta'), // metadata
    i64(BigInt(NOW)), // commitTimestamp
    ...(version === 1 ? [i64(expire)] : []), // expireTimestamp (v1 only)
  ]);
}

/** Writes one group metadata record and one offset commit under `ibp`; returns the raw values. */
async function written(ibp: string, expireTimestampMs: number | null = null): Promise<{ group: Buffer; offset: Buffer }> {
  const storage = new MemoryOffsetsLog();
  storage.leaders.add(0);
  const version = parseMetadataVersion(ibp);
  if (!version) throw new Error(`not a version: ${ibp}`);
  const config = {
    maxMetadataSize: 4096,
    loadBufferSize: 1 << 20,
    offsetsRetentionMs: 3_600_000,
    offsetsRetentionCheckIntervalMs: 600_000,
    offsetCommitTimeoutMs: 5000,
    compression: 0,
    interBrokerProtocolVersion: version,
  };
  const manager = new GroupMetadataManager(1, config, storage, pino({ enabled: false }), 1, () => NOW);
  const group = new GroupMetadata('g', GroupState.Empty, () => NOW);
  group.add(new MemberMetadata('m1', 'inst', 'client', '/127.0.0.1', 300_000, 10_000, 'consumer', [{ name: 'range', metadata: SUB }]), null);
  group.transitionTo(GroupState.PreparingRebalance);
  group.initNextGeneration();
  const stored = new Pending<number>();
  manager.storeGroup(group, new Map([['m1', ASSIGNMENT]]), stored.callback);
  expect(await stored.promise).toBe(0);
  const o: OffsetAndMetadata = { committedOffset: 42n, leaderEpoch: 5, metadata: 'meta', commitTimestampMs: NOW, expireTimestampMs };
  const committed = new Pending<unknown>();
  manager.storeOffsets(group, 'm1', [[{ topic: 't', partition: 0 }, o]], committed.callback);
  await committed.promise;
  const values = [...recordBatches(Buffer.concat(storage.batches.get(0) ?? []))].flatMap((b) => [...b]).map((r) => Buffer.from(r.value!));
  expect(values).toHaveLength(2);
  return { group: values[0]!, offset: values[1]! };
}

describe('__consumer_offsets – value versions follow inter.broker.protocol.version', () => {
  // each boundary of Kafka's mapping, on both sides
  const cases: ReadonlyArray<[ibp: string, group: number, offset: number]> = [
    ['0.10.0', 0, 1],
    ['0.10.1-IV0', 1, 1],
    ['2.0', 1, 1],
    ['2.1-IV0', 2, 2],
    ['2.1-IV1', 2, 3],
    ['2.2', 2, 3],
    ['2.3-IV0', 3, 3],
    ['3.8', 3, 3],
  ];
  for (const [ibp, groupVersion, offsetVersion] of cases) {
    it(`__consumer_offsets – inter.broker.protocol.version ${ibp} writes group metadata v${groupVersion} and offset commits v${offsetVersion}`, async () => {
      const { group, offset } = await written(ibp);
      expect(group.toString('hex')).toBe(goldenGroup(groupVersion).toString('hex'));
      expect(offset.toString('hex')).toBe(goldenOffset(offsetVersion).toString('hex'));
    });
  }

  it('__consumer_offsets – a commit with an explicit expire timestamp is v1 under any inter.broker.protocol.version', async () => {
    const { offset } = await written('3.8', NOW + 1000);
    expect(offset.toString('hex')).toBe(goldenOffset(1, BigInt(NOW + 1000)).toString('hex'));
  });
});

import { describe, expect, it } from 'vitest';
import {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  deserializeAssignment,
  deserializeSubscription,
  readConsumerProtocolAssignment,
  readConsumerProtocolSubscription,
  serializeAssignment,
  serializeSubscription,
  writeConsumerProtocolAssignment,
  writeConsumerProtocolSubscription,
} from './consumer-protocol.js';

/*
 * Golden bytes: captured on 3 Dec 2026 from real clients in groups on a local samsa cluster (one
 * broker, topics t0 with 4 partitions and t1 with 3), read back with DescribeGroups by
 * `node scripts/capture-consumer-protocol.mjs 127.0.0.1:29192 <group>` (member metadata = the
 * member's JoinGroup subscription, member assignment = what the leader sent in SyncGroup):
 *  - kcat 1.7.1 / librdkafka 2.0.2: `kcat -b ... -G <group> t0 t1 -X partition.assignment.strategy=range|cooperative-sticky`,
 *    two members (range); three members, the third joining after the others were Stable
 *    (cooperative-sticky, so the first two rejoined with owned partitions);
 *  - KafkaJS 2.2.4: consumer.subscribe({ topics: ['t0', 't1'] }) with its default RoundRobinAssigner, two members;
 *  - @platformatic/kafka 2.12.1: Consumer({ clientRack: 'rack-N', protocols: [{ name: 'cooperative-sticky', version: 3 }] }),
 *    three members, the third joining later.
 * No client at hand writes version 2; its layout is version 3 without RackId (tested by round trip).
 */
const GOLDEN = {
  // librdkafka 2.0.2, range, member kcat-range-1 (sorted first): subscription v1, assignment v0
  kcatRangeSubscription: '00010000000200027430000274310000000000000000',
  kcatRangeAssignment: '000000000002000274300000000200000000000000010002743100000002000000000000000100000000',
  // librdkafka 2.0.2, cooperative-sticky, member kcat-cooperative-sticky-1 after the third member joined:
  // v1 with owned partitions; user data = StickyAssignor's ConsumerUserData v1 (previous assignment + generation 2)
  kcatCoopSubscription:
    '0001000000020002743000027431000000240000000200027430000000010000000200027431000000020000000000000002000000020000000200027430000000010000000200027431000000020000000000000002',
  kcatCoopAssignment:
    '0000000000020002743000000001000000020002743100000002000000000000000200000024000000020002743000000001000000020002743100000002000000000000000200000002',
  // KafkaJS 2.2.4, RoundRobinAssigner, member kafkajs-1: subscription v0 (empty user data)
  kafkajsSubscription: '000000000002000274300002743100000000',
  kafkajsAssignment: '000000000002000274300000000200000000000000020002743100000002000000000000000200000000',
  // @platformatic/kafka 2.12.1, cooperative-sticky v3, member platformatic-2 (rack-2) after the rebalance
  platformaticSubscription: '0003000000020002743000027431ffffffff00000002000274300000000200000001000000030002743100000001000000010000000200067261636b2d32',
  platformaticAssignment: '00030000000200027430000000020000000100000003000274310000000100000001ffffffff',
  // @platformatic/kafka 2.12.1, the first JoinGroup of platformatic-1: nothing owned, no generation
  platformaticFirstSubscription: '0003000000020002743000027431ffffffff00000000ffffffff00067261636b2d31',
} as const;

const hex = (s: string): Buffer => Buffer.from(s, 'hex');

describe('consumer protocol – golden bytes from real clients', () => {
  it('consumer protocol – librdkafka range subscription v1 and assignment v0 decode and re-encode byte for byte', () => {
    const sub = readConsumerProtocolSubscription(hex(GOLDEN.kcatRangeSubscription));
    expect(sub).toEqual({ version: 1, topics: ['t0', 't1'], userData: Buffer.alloc(0), ownedPartitions: [], generationId: -1, rackId: null });
    const { version, ...fields } = sub;
    expect(writeConsumerProtocolSubscription(fields, version).toString('hex')).toBe(GOLDEN.kcatRangeSubscription);

    const a = readConsumerProtocolAssignment(hex(GOLDEN.kcatRangeAssignment));
    expect(a).toEqual({
      version: 0,
      assignedPartitions: [
        { topic: 't0', partitions: [0, 1] },
        { topic: 't1', partitions: [0, 1] },
      ],
      userData: Buffer.alloc(0),
    });
    expect(writeConsumerProtocolAssignment({ assignedPartitions: a.assignedPartitions, userData: a.userData }, 0).toString('hex')).toBe(
      GOLDEN.kcatRangeAssignment,
    );
  });

  it('consumer protocol – librdkafka cooperative-sticky subscription v1 carries owned partitions and user data', () => {
    const bytes = hex(GOLDEN.kcatCoopSubscription);
    const sub = deserializeSubscription(bytes, 'kcat-cooperative-sticky-1');
    expect(sub).toEqual({
      memberId: 'kcat-cooperative-sticky-1',
      groupInstanceId: null,
      topics: ['t0', 't1'],
      userData: hex('000000020002743000000001000000020002743100000002000000000000000200000002'),
      ownedPartitions: [
        { topic: 't0', partition: 2 },
        { topic: 't1', partition: 0 },
        { topic: 't1', partition: 2 },
      ],
      generationId: -1,
      rackId: null,
    });
    // our serializer builds the same bytes from the same content at the same version
    expect(
      serializeSubscription(
        { topics: ['t1', 't0'], userData: sub.userData, ownedPartitions: [...sub.ownedPartitions].reverse(), generationId: -1, rackId: null },
        1,
      ).toString('hex'),
    ).toBe(GOLDEN.kcatCoopSubscription);
    const a = deserializeAssignment(hex(GOLDEN.kcatCoopAssignment));
    expect(a.partitions).toEqual(sub.ownedPartitions);
    expect(serializeAssignment(a, 0).toString('hex')).toBe(GOLDEN.kcatCoopAssignment);
  });

  it('consumer protocol – KafkaJS subscription v0 and assignment decode; the v0 helpers read them', () => {
    expect(decodeConsumerSubscription(hex(GOLDEN.kafkajsSubscription))).toEqual({ version: 0, topics: ['t0', 't1'], userData: Buffer.alloc(0) });
    expect(readConsumerProtocolSubscription(hex(GOLDEN.kafkajsSubscription)).ownedPartitions).toEqual([]);
    expect(decodeConsumerAssignment(hex(GOLDEN.kafkajsAssignment)).partitions).toEqual([
      { topic: 't0', partitions: [0, 2] },
      { topic: 't1', partitions: [0, 2] },
    ]);
    const s = readConsumerProtocolSubscription(hex(GOLDEN.kafkajsSubscription));
    expect(writeConsumerProtocolSubscription(s, 0).toString('hex')).toBe(GOLDEN.kafkajsSubscription);
  });

  it('consumer protocol – @platformatic/kafka subscription v3 (owned partitions, generation, rack) and assignment v3 with null user data', () => {
    const sub = readConsumerProtocolSubscription(hex(GOLDEN.platformaticSubscription));
    expect(sub).toEqual({
      version: 3,
      topics: ['t0', 't1'],
      userData: null,
      ownedPartitions: [
        { topic: 't0', partitions: [1, 3] },
        { topic: 't1', partitions: [1] },
      ],
      generationId: 2,
      rackId: 'rack-2',
    });
    const m = deserializeSubscription(hex(GOLDEN.platformaticSubscription), 'p2', 'static-2');
    expect(serializeSubscription(m).toString('hex')).toBe(GOLDEN.platformaticSubscription);
    expect(m.groupInstanceId).toBe('static-2');

    const first = deserializeSubscription(hex(GOLDEN.platformaticFirstSubscription), 'p1');
    expect(first).toMatchObject({ ownedPartitions: [], generationId: -1, rackId: 'rack-1', userData: null });
    expect(serializeSubscription(first).toString('hex')).toBe(GOLDEN.platformaticFirstSubscription);

    const a = deserializeAssignment(hex(GOLDEN.platformaticAssignment));
    expect(a).toEqual({
      partitions: [
        { topic: 't0', partition: 1 },
        { topic: 't0', partition: 3 },
        { topic: 't1', partition: 1 },
      ],
      userData: null,
    });
    expect(serializeAssignment(a).toString('hex')).toBe(GOLDEN.platformaticAssignment);
  });
});

describe('consumer protocol – versions', () => {
  const fields = { topics: ['a'], userData: Buffer.from('u'), ownedPartitions: [{ topic: 'a', partitions: [0] }], generationId: 7, rackId: 'r' };

  it('consumer protocol – each version writes only its fields; v2 is v3 without the rack', () => {
    const lengths = [0, 1, 2, 3].map((v) => writeConsumerProtocolSubscription(fields, v).length);
    // v0: 2 + 4 + (2+1) + (4+1); v1: + 4 + (2+1) + 4 + 4; v2: + 4; v3: + 2 + 1
    expect(lengths).toEqual([14, 29, 33, 36]);
    const v2 = readConsumerProtocolSubscription(writeConsumerProtocolSubscription(fields, 2));
    expect(v2).toEqual({ ...fields, version: 2, rackId: null });
    const v1 = readConsumerProtocolSubscription(writeConsumerProtocolSubscription(fields, 1));
    expect(v1).toEqual({ ...fields, version: 1, generationId: -1, rackId: null });
  });

  it('consumer protocol – a higher version is read as v3 and trailing bytes are ignored, as Kafka does', () => {
    const future = Buffer.concat([hex(GOLDEN.platformaticSubscription), hex('deadbeef00')]);
    future.writeInt16BE(7, 0);
    const sub = readConsumerProtocolSubscription(future);
    expect(sub.version).toBe(7);
    expect(sub.rackId).toBe('rack-2');
    expect(sub.generationId).toBe(2);
    const a = Buffer.concat([hex(GOLDEN.platformaticAssignment), hex('0102')]);
    a.writeInt16BE(4, 0);
    expect(readConsumerProtocolAssignment(a).assignedPartitions).toHaveLength(2);
    // writing above the highest version writes v3
    expect(writeConsumerProtocolSubscription(fields, 9).readInt16BE(0)).toBe(3);
  });

  it('consumer protocol – truncated fields and negative versions throw; a body ending at a field boundary gets defaults', () => {
    const golden = hex(GOLDEN.platformaticSubscription);
    expect(() => readConsumerProtocolSubscription(golden.subarray(0, golden.length - 3))).toThrow();
    expect(() => readConsumerProtocolSubscription(hex('ffff00000000'))).toThrow(/version/);
    expect(() => readConsumerProtocolAssignment(hex(GOLDEN.kcatRangeAssignment).subarray(0, 12))).toThrow();
    // a v1 header on a v0 body (KafkaJS custom assigners): owned partitions default to none
    const v1OnV0 = hex(GOLDEN.kafkajsSubscription);
    v1OnV0.writeInt16BE(1, 0);
    expect(readConsumerProtocolSubscription(v1OnV0)).toMatchObject({ version: 1, ownedPartitions: [], generationId: -1 });
    expect(deserializeAssignment(Buffer.alloc(0))).toEqual({ partitions: [], userData: null });
  });

  it("consumer protocol – serializeAssignment groups by topic in order of first appearance (Kafka's serializeAssignment)", () => {
    const bytes = serializeAssignment({
      partitions: [
        { topic: 'b', partition: 1 },
        { topic: 'a', partition: 0 },
        { topic: 'b', partition: 0 },
      ],
      userData: null,
    });
    expect(readConsumerProtocolAssignment(bytes).assignedPartitions).toEqual([
      { topic: 'b', partitions: [1, 0] },
      { topic: 'a', partitions: [0] },
    ]);
  });
});

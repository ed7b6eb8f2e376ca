/**
 * `samsa consumer-groups` (kafka-consumer-groups.sh) against a 3-broker cluster with KafkaJS 2.2.4
 * consumer groups: --describe's lag checked against log end offsets and committed offsets read
 * independently through KafkaJS's admin while a producer runs; --members / --state / --list;
 * --reset-offsets (dry runs, clamping, --execute making the next consumer re-read everything,
 * refusal for an active group); --delete-offsets (OffsetDelete) and --delete.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import type { Admin, Consumer, Kafka as KafkaT, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestCluster, until, describeCluster } from './harness.js';
import { rawRequest, waitForBrokerMetadata } from './clients/wire.js';

const { Kafka, logLevel, AssignerProtocol } = kafkajs;
const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../packages/cli/bin/samsa.js', import.meta.url));

async function samsa(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [bin, ...args], { timeout: 90_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Rows of a table printed with a header line starting with `first`: header names → cells. */
function table(out: string, first: string): Array<Record<string, string>> {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`${first} `));
  if (at < 0) return [];
  const header = lines[at]!.trim().split(/\s+/);
  const rows: Array<Record<string, string>> = [];
  for (const l of lines.slice(at + 1)) {
    if (l.trim() === '') break;
    const cells = l.trim().split(/\s+/);
    rows.push(Object.fromEntries(header.map((h, i) => [h, cells[i] ?? ''])));
  }
  return rows;
}

/** Java's String.hashCode and Kafka's Utils.abs: the group's __consumer_offsets partition. */
function offsetsPartition(groupId: string, partitions = 50): number {
  let h = 0;
  for (let i = 0; i < groupId.length; i++) h = (Math.imul(31, h) + groupId.charCodeAt(i)) | 0;
  return (h === -2147483648 ? 0 : Math.abs(h)) % partitions;
}

describeCluster(
  'samsa consumer-groups against a 3-broker cluster',
  () => {
    let c: TestCluster;
    let kafka: KafkaT;
    let admin: Admin;
    let producer: Producer;
    let bs: string[];
    const consumers: Consumer[] = [];
    const topic = 'cg-orders';
    const PARTITIONS = 3;

    beforeAll(async () => {
      c = await TestCluster.start({ brokers: 3, overrides: { 'group.initial.rebalance.delay.ms': '300' } });
      await waitForBrokerMetadata(c.bootstrap.split(','), () => c.controllerId());
      bs = ['--bootstrap-server', c.brokers[0]!.address, '--timeout', '30000'];
      kafka = new Kafka({ clientId: 'cg-e2e', brokers: c.bootstrap.split(','), retry: { retries: 10, initialRetryTime: 100 }, logLevel: logLevel.NOTHING });
      admin = kafka.admin();
      await admin.connect();
      expect(
        (
          await samsa(
            'topics',
            '--bootstrap-server',
            c.bootstrap,
            '--create',
            '--topic',
            topic,
            '--partitions',
            String(PARTITIONS),
            '--replication-factor',
            '2',
          )
        ).code,
      ).toBe(0);
      await c.waitForLeaders(topic, PARTITIONS);
      producer = kafka.producer();
      await producer.connect();
    });

    afterAll(async () => {
      for (const k of consumers) await k.disconnect().catch(() => undefined);
      await producer?.disconnect().catch(() => undefined);
      await admin?.disconnect();
      await c?.stop();
    });

    /** Committed offsets per partition (KafkaJS admin → OffsetFetch); -1 when none. */
    async function committed(groupId: string): Promise<Map<number, number>> {
      const r = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map(r.flatMap((t) => t.partitions.map((p) => [p.partition, Number(p.offset)] as [number, number])));
    }

    /** High watermarks per partition (KafkaJS admin → ListOffsets). */
    async function endOffsets(): Promise<Map<number, number>> {
      return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
    }

    async function produce(n: number, tag: string): Promise<void> {
      const messages = Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${tag}-${i}` }));
      for (let i = 0; i < messages.length; i += 100) await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 100) });
    }

    /** A KafkaJS consumer of `topic` in `groupId` (from the committed offsets; earliest without); `delayMs` per message. */
    async function consume(groupId: string, seen: string[], delayMs = 0): Promise<Consumer> {
      const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, rebalanceTimeout: 20_000, heartbeatInterval: 500 });
      consumers.push(consumer);
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        autoCommitInterval: 100,
        eachMessage: async ({ message }) => {
          if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
          seen.push(message.value!.toString());
        },
      });
      return consumer;
    }

    async function stop(consumer: Consumer): Promise<void> {
      await consumer.disconnect();
      consumers.splice(consumers.indexOf(consumer), 1);
    }

    async function groupState(groupId: string): Promise<string> {
      return (await admin.describeGroups([groupId])).groups[0]!.state;
    }

    it('consumer-groups – --describe shows each partition’s lag (log end offset − committed offset, both read independently) while a producer runs; --members, --state, --list', async () => {
      const group = 'cg-lag';
      const seen: string[] = [];
      // slow consumers (20 ms a message) behind a producer of ~200 messages a second: the lag grows
      const a = await consume(group, seen, 20);
      const b = await consume(group, seen, 20);
      await until(
        async () => {
          const d = (await admin.describeGroups([group])).groups[0]!;
          return d.state === 'Stable' && d.members.length === 2;
        },
        'a Stable group of 2 members',
        60_000,
      );
      let producing = true;
      let produced = 0;
      const loop = (async () => {
        while (producing) {
          await produce(10, `lag${produced}`);
          produced += 10;
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      try {
        await until(() => seen.length >= 20 && produced >= 200, 'consumption under way', 60_000);
        await until(async () => [...(await committed(group)).values()].every((o) => o >= 0), 'a committed offset for every partition', 60_000);

        const leoBefore = await endOffsets();
        const committedBefore = await committed(group);
        const d = await samsa('consumer-groups', ...bs, '--describe', '--group', group);
        const leoAfter = await endOffsets();
        const committedAfter = await committed(group);
        expect(d.code).toBe(0);
        expect(d.stdout.startsWith('\nGROUP ')).toBe(true);
        const rows = table(d.stdout, 'GROUP');
        expect(rows.map((r) => Number(r['PARTITION'])).sort()).toEqual([0, 1, 2]);
        const kd = (await admin.describeGroups([group])).groups[0]!;
        const owner = new Map<number, string>();
        for (const m of kd.members) {
          const assignment = AssignerProtocol.MemberAssignment.decode(m.memberAssignment)!.assignment;
          for (const p of assignment[topic] ?? []) owner.set(p, m.memberId);
        }
        let totalLag = 0;
        for (const r of rows) {
          const p = Number(r['PARTITION']);
          const cur = Number(r['CURRENT-OFFSET']);
          const leo = Number(r['LOG-END-OFFSET']);
          expect(r['GROUP']).toBe(group);
          expect(r['TOPIC']).toBe(topic);
          expect(leo).toBeGreaterThanOrEqual(leoBefore.get(p)!);
          expect(leo).toBeLessThanOrEqual(leoAfter.get(p)!);
          expect(cur).toBeGreaterThanOrEqual(committedBefore.get(p)!);
          expect(cur).toBeLessThanOrEqual(committedAfter.get(p)!);
          expect(Number(r['LAG'])).toBe(leo - cur);
          expect(r['CONSUMER-ID']).toBe(owner.get(p));
          expect(r['HOST']).toBe('/127.0.0.1');
          expect(r['CLIENT-ID']).toBe('cg-e2e');
          totalLag += leo - cur;
        }
        expect(totalLag).toBeGreaterThan(0);

        // --members (--verbose): one line per member with its partitions
        const m = await samsa('consumer-groups', ...bs, '--describe', '--group', group, '--members', '--verbose');
        expect(m.code).toBe(0);
        const members = table(m.stdout, 'GROUP');
        expect(members.map((x) => x['CONSUMER-ID']).sort()).toEqual(kd.members.map((x) => x.memberId).sort());
        for (const x of members) {
          const mine = [...owner]
            .filter(([, id]) => id === x['CONSUMER-ID'])
            .map(([p]) => p)
            .sort();
          expect(x['#PARTITIONS']).toBe(String(mine.length));
          expect(x['ASSIGNMENT']).toBe(`${topic}(${mine.join(',')})`);
        }

        // --state: the coordinator is the leader of the group's __consumer_offsets partition
        const s = await samsa('consumer-groups', ...bs, '--describe', '--group', group, '--state');
        expect(s.code).toBe(0);
        const coordinator = await c.leaderOf('__consumer_offsets', offsetsPartition(group));
        const line = s.stdout.split('\n').find((l) => l.startsWith(`${group} `))!;
        expect(line.trim().split(/\s+/)).toEqual([group, c.broker(coordinator).address, `(${coordinator})`, 'RoundRobinAssigner', 'Stable', '2']);

        const l = await samsa('consumer-groups', ...bs, '--list');
        expect(l.stdout.split('\n')).toContain(group);
        const ls = await samsa('consumer-groups', ...bs, '--list', '--state', 'stable');
        expect(table(ls.stdout, 'GROUP')).toContainEqual({ GROUP: group, STATE: 'Stable' });
        expect((await samsa('consumer-groups', ...bs, '--list', '--state', 'empty')).stdout.split('\n').some((x) => x.startsWith(`${group} `))).toBe(false);
      } finally {
        producing = false;
        await loop;
        await stop(a);
        await stop(b);
      }
    });

    it('consumer-groups – --reset-offsets: refused while the group is active; dry runs (--to-offset clamped, --shift-by, no flag = dry run) change nothing; --to-earliest --execute makes the next run re-read everything', async () => {
      const group = 'cg-reset';
      await produce(30, 'reset');
      const leo = await endOffsets();
      const total = [...leo.values()].reduce((x, y) => x + y, 0);
      const first: string[] = [];
      const consumer = await consume(group, first);
      await until(
        async () => {
          const o = await committed(group);
          return [...leo].every(([p, end]) => o.get(p) === end);
        },
        'the group committed the end of every partition',
        60_000,
      );
      expect(first.length).toBe(total);

      const active = await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute');
      expect(active.code).toBe(1);
      expect(active.stdout).toContain(`Error: Assignments can only be reset if the group '${group}' is inactive, but the current state is Stable.`);
      await stop(consumer);
      await until(async () => (await groupState(group)) === 'Empty', 'the group Empty', 30_000);

      const before = await committed(group);
      const toOffset = await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', group, '--topic', topic, '--to-offset', '2', '--dry-run');
      expect(toOffset.code).toBe(0);
      expect(table(toOffset.stdout, 'GROUP')).toEqual(
        [0, 1, 2].map((p) => ({ GROUP: group, TOPIC: topic, PARTITION: String(p), 'NEW-OFFSET': String(Math.min(2, leo.get(p)!)) })),
      );
      const clamped = await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', group, '--topic', `${topic}:1`, '--to-offset', '999999', '--dry-run');
      expect(table(clamped.stdout, 'GROUP')).toEqual([{ GROUP: group, TOPIC: topic, PARTITION: '1', 'NEW-OFFSET': String(leo.get(1)) }]);
      const shift = await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', group, '--all-topics', '--shift-by', '-3');
      expect(shift.code).toBe(0);
      expect(shift.stderr).toContain('WARN: No action will be performed as the --execute option is missing.');
      expect(table(shift.stdout, 'GROUP').map((r) => [r['PARTITION'], r['NEW-OFFSET']])).toEqual(
        [0, 1, 2].map((p) => [String(p), String(Math.max(0, before.get(p)! - 3))]),
      );
      expect(await committed(group)).toEqual(before);

      // --export writes the plan as CSV; --from-file --execute applies it
      const exported = await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', group, '--topic', topic, '--to-offset', '1', '--export');
      expect(exported.stdout).toBe('cg-orders,0,1\ncg-orders,1,1\ncg-orders,2,1\n\n');
      const plan = join(c.dir, 'plan.csv');
      await writeFile(plan, exported.stdout);
      expect((await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', group, '--from-file', plan, '--execute')).code).toBe(0);
      expect([...(await committed(group)).values()]).toEqual([1, 1, 1]);

      const exec = await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute');
      expect(exec.code).toBe(0);
      expect(table(exec.stdout, 'GROUP').map((r) => r['NEW-OFFSET'])).toEqual(['0', '0', '0']);
      expect([...(await committed(group)).values()]).toEqual([0, 0, 0]);
      // the described group: no members, committed offsets with the whole partition as lag
      const desc = await samsa('consumer-groups', ...bs, '--describe', '--group', group);
      expect(desc.stderr).toContain(`Consumer group '${group}' has no active members.`);
      for (const r of table(desc.stdout, 'GROUP'))
        expect([r['CURRENT-OFFSET'], r['LAG'], r['CONSUMER-ID'], r['HOST'], r['CLIENT-ID']]).toEqual([
          '0',
          String(leo.get(Number(r['PARTITION']))),
          '-',
          '-',
          '-',
        ]);

      const again: string[] = [];
      const rerun = await consume(group, again);
      await until(() => again.length >= total, `${total} records re-read`, 60_000);
      await until(async () => [...(await committed(group))].every(([p, o]) => o === leo.get(p)), 'the re-run committed the end', 60_000);
      expect(again.length).toBe(total);
      expect(new Set(again)).toEqual(new Set(first));
      await stop(rerun);
    });

    it('consumer-groups – --delete-offsets (OffsetDelete): refused for a subscribed topic of an active group, then deleted once inactive; --delete refuses non-empty groups, deletes empty ones', async () => {
      const group = 'cg-delete';
      // OffsetDelete is advertised (ApiVersions comes from the handler table)
      const versions = await rawRequest(c.brokers[1]!.address, 18, 3, { clientSoftwareName: 'e2e', clientSoftwareVersion: '1' });
      expect(versions.apiKeys.find((k) => k.apiKey === 47)).toMatchObject({ minVersion: 0, maxVersion: 0 });
      await produce(9, 'del');
      const seen: string[] = [];
      const consumer = await consume(group, seen);
      await until(async () => [...(await committed(group)).values()].every((o) => o > 0), 'offsets committed', 60_000);

      const refused = await samsa('consumer-groups', ...bs, '--delete-offsets', '--group', group, '--topic', topic);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain('Error: Encountered some partition-level error, see the follow-up details.');
      const refusedRows = table(refused.stdout, 'TOPIC');
      expect(refusedRows.map((r) => r['PARTITION'])).toEqual(['0', '1', '2']);
      expect(refused.stdout).toContain('org.apache.kafka.common.errors.GroupSubscribedToTopicException');
      const busy = await samsa('consumer-groups', ...bs, '--delete', '--group', group);
      expect(busy.code).toBe(1);
      expect(busy.stdout).toContain(
        `* Group '${group}' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.`,
      );

      await stop(consumer);
      await until(async () => (await groupState(group)) === 'Empty', 'the group Empty', 30_000);
      const one = await samsa('consumer-groups', ...bs, '--delete-offsets', '--group', group, '--topic', `${topic}:0`);
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(
        new RegExp(`^Request succeeded for deleting offsets from group ${group}\\.\\n\\nTOPIC +PARTITION +STATUS *\\n${topic} +0 +Successful *\\n$`),
      );
      const left = await committed(group);
      expect(left.get(0)).toBe(-1);
      expect(left.get(1)).toBeGreaterThan(0);

      const deleted = await samsa('consumer-groups', ...bs, '--delete', '--group', group);
      expect(deleted).toMatchObject({ code: 0, stdout: `Deletion of requested consumer groups ('${group}') was successful.\n` });
      expect((await samsa('consumer-groups', ...bs, '--list')).stdout.split('\n')).not.toContain(group);
      const gone = await samsa('consumer-groups', ...bs, '--describe', '--group', group);
      expect(gone.code).toBe(1);
      expect(gone.stdout).toBe(`\nError: Consumer group '${group}' does not exist.\n`);
      expect([...(await committed(group)).values()]).toEqual([-1, -1, -1]);
    });

    it('consumer-groups – usage errors exit 1 with Kafka’s message', async () => {
      const none = await samsa('consumer-groups', ...bs);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets');
      const both = await samsa('consumer-groups', ...bs, '--reset-offsets', '--group', 'g', '--all-topics', '--to-earliest', '--to-latest');
      expect(both.code).toBe(1);
      expect(both.stderr).toContain('Option "[to-earliest]" can\'t be used with option "[to-latest]"');
    });
  },
  { processesOnly: 'reads broker files or starts broker processes; not yet run on containers' },
);

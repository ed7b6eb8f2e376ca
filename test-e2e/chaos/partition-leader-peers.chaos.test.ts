/**
 * A leader partitioned from its followers, still in touch with ZooKeeper and the clients (RF=3,
 * min.insync.replicas=2, acks=all), brokers in their own network namespaces. The followers cannot
 * fetch, so the leader shrinks the ISR to itself (it can write the state znode): acks=all writes
 * appended before the shrink complete with NOT_ENOUGH_REPLICAS_AFTER_APPEND or time out, later ones
 * are refused with NOT_ENOUGH_REPLICAS; none is acknowledged while only the leader holds it. The
 * controller keeps the leader (it is alive in ZooKeeper). After healing the followers catch up and
 * rejoin; nothing acknowledged is lost. Full set only (CHAOS_FULL=1).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ErrorCode } from '@samsa/protocol';
import { until } from '../harness.js';
import { describeNetns } from '../netns.js';
import { CHAOS_FULL, baseSeed, chaosAssignment, scaledTimeout, seededRandom, waitForFullIsr } from './scenario.js';
import { produceAll, PARTITION_OVERRIDES, controllerOf, pick, runPartitionScenario, startNetnsCluster, statesOf, type NetnsCluster } from './netns-cluster.js';

const LAG_MS = Number(PARTITION_OVERRIDES['replica.lag.time.max.ms']);

describeNetns('chaos – leader partitioned from its followers (network namespaces)', () => {
  let k: NetnsCluster | undefined;
  beforeAll(async () => {
    k = await startNetnsCluster({ brokers: 3 });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it.skipIf(!CHAOS_FULL)(
    'partition – a leader cut off from its followers shrinks the ISR to itself and acknowledges no acks=all write until they are back; 0 lost',
    async () => {
      const { c, net } = k!;
      const seed = baseSeed + 41;
      const ctrl = await controllerOf(c);
      // the leader is not the controller (which would lose its channels to the others as well)
      const [leader, f1] = pick(
        seededRandom(seed),
        [0, 1, 2].filter((b) => b !== ctrl),
      ) as [number, number];
      const topic = 'leader-alone';
      const assignment = chaosAssignment([
        [leader, f1, ctrl],
        [leader, ctrl, f1],
      ]);
      const codes: number[] = [];
      await runPartitionScenario({
        name: `leader ${leader} partitioned from its followers`,
        c,
        topic,
        assignment,
        seed,
        producerConfig: { 'request.timeout.ms': 8000 },
        fault: async () => {
          await net.isolate(leader, 'peers');
          // appended now, before the ISR shrinks: must not be acknowledged
          const early = produceAll(c, c.broker(leader).address, topic, 0, 'leader-alone-early', LAG_MS * 3);
          await until(
            async () => (await statesOf(c, topic, assignment.length)).every((s) => s.leader === leader && s.isr.length === 1),
            'the ISR down to the leader',
            scaledTimeout(LAG_MS + 30_000),
            100,
          );
          codes.push(await early);
          expect([ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT]).toContain(codes[0]);
          // after the shrink acks=all is refused up front
          codes.push(await produceAll(c, c.broker(leader).address, topic, 1, 'leader-alone-late', 3000));
          expect(codes[1]).toBe(ErrorCode.NOT_ENOUGH_REPLICAS);
          // the controller keeps it as leader (alive in ZooKeeper); no unclean election
          const ss = await statesOf(c, topic, assignment.length);
          expect(ss.map((s) => s.leader)).toEqual(assignment.map(() => leader));
          await net.heal(leader);
          await waitForFullIsr(c, topic, assignment.length, 60_000);
          console.log(
            `[partition] leader ${leader} cut off from its followers: ISR shrank to [${leader}]; acks=all answered ${codes.join(', ')} (20 NOT_ENOUGH_REPLICAS_AFTER_APPEND / 7 REQUEST_TIMED_OUT, then 19 NOT_ENOUGH_REPLICAS)`,
          );
        },
      });
    },
  );
});

/**
 * A follower partitioned from its leader (RF=3, min.insync.replicas=2, acks=all), the brokers in
 * their own network namespaces (test-e2e/netns.ts): the leader drops it from the ISR after
 * replica.lag.time.max.ms, produce goes on with the other two, and it rejoins after the partition
 * heals (issue #6's acceptance, read from the state znode and from Metadata). Every scenario ends with
 * the verify check: 0 lost, 0 reordered, 0 divergent. Quick subset: both tests.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { until } from '../harness.js';
import { describeNetns } from '../netns.js';
import { baseSeed, chaosAssignment, moreAcks, scaledTimeout, seededRandom, waitForFullIsr } from './scenario.js';
import { PARTITION_OVERRIDES, controllerOf, metadataOf, pick, runPartitionScenario, startNetnsCluster, statesOf, type NetnsCluster } from './netns-cluster.js';

const LAG_MS = Number(PARTITION_OVERRIDES['replica.lag.time.max.ms']);

describeNetns('chaos – follower partitioned from its leader (network namespaces)', () => {
  let k: NetnsCluster | undefined;
  beforeAll(async () => {
    k = await startNetnsCluster({ brokers: 3 });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it('partition – a follower cut off from the leader leaves the ISR after replica.lag.time.max.ms, produce continues, it rejoins after heal; 0 lost', async () => {
    const { c, net } = k!;
    const seed = baseSeed + 11;
    const ctrl = await controllerOf(c);
    // leader and follower: the two brokers that are not the controller, in an order drawn from `seed`
    const [leader, follower] = pick(
      seededRandom(seed),
      [0, 1, 2].filter((b) => b !== ctrl),
    ) as [number, number];
    const topic = 'follower-cut';
    let shrankAfter = 0;
    let rejoinedAfter = 0;
    await runPartitionScenario({
      name: `follower ${follower} partitioned from leader ${leader}`,
      c,
      topic,
      assignment: chaosAssignment([[leader, follower, ctrl]]),
      seed,
      fault: async (w) => {
        const t0 = Date.now();
        await net.isolate(follower, { brokers: [leader] });
        shrankAfter = await until(
          async () => {
            const [s] = await statesOf(c, topic, 1);
            return s!.isr.includes(follower) ? null : Date.now() - t0;
          },
          'the follower out of the ISR (state znode)',
          scaledTimeout(LAG_MS + 30_000),
          100,
        );
        const [s] = await statesOf(c, topic, 1);
        expect(s!.leader).toBe(leader);
        expect([...s!.isr].sort()).toEqual([leader, ctrl].sort());
        // the ISR change reaches every broker's metadata (ISR change notification → UpdateMetadata)
        await until(
          async () => {
            const [p] = await metadataOf(c, c.broker(ctrl).address, topic);
            return p && !p.isr.includes(follower) && p.leader === leader;
          },
          'Metadata without the follower in the ISR',
          30_000,
          200,
        );
        // acks=all writes go on with leader + the other follower (min.insync.replicas=2)
        await moreAcks(w, 200, 'while the follower is cut off');
        const h0 = Date.now();
        await net.heal(follower);
        rejoinedAfter = await until(
          async () => {
            const [st] = await statesOf(c, topic, 1);
            return st!.isr.includes(follower) ? Date.now() - h0 : null;
          },
          'the follower back in the ISR (state znode)',
          scaledTimeout(60_000),
          100,
        );
        await until(
          async () => {
            const [p] = await metadataOf(c, c.broker(follower).address, topic);
            return p && p.isr.length === 3;
          },
          'Metadata with the follower back in the ISR',
          30_000,
          200,
        );
      },
    });
    console.log(
      `[partition] follower ${follower} cut off from leader ${leader}: out of the ISR after ${shrankAfter} ms (replica.lag.time.max.ms ${LAG_MS}); back ${rejoinedAfter} ms after heal`,
    );
    // not before the lag time (less the follower's last fetch wait), and not long after it (checked every lag/2)
    expect(shrankAfter).toBeGreaterThanOrEqual(LAG_MS - 1000);
    expect(shrankAfter).toBeLessThanOrEqual(LAG_MS * 2 + 10_000);
  });

  it('partition – a follower cut off from every peer leaves the ISRs of partitions led by two brokers and rejoins after heal; 0 lost', async () => {
    const { c, net } = k!;
    const seed = baseSeed + 12;
    const ctrl = await controllerOf(c);
    const [other, follower] = pick(
      seededRandom(seed),
      [0, 1, 2].filter((b) => b !== ctrl),
    ) as [number, number];
    const topic = 'follower-alone';
    // the follower leads nothing: partitions led by the controller and by the other broker
    const assignment = chaosAssignment([
      [other, ctrl, follower],
      [ctrl, other, follower],
      [other, ctrl, follower],
      [ctrl, other, follower],
    ]);
    await runPartitionScenario({
      name: `follower ${follower} partitioned from all peers`,
      c,
      topic,
      assignment,
      seed,
      fault: async (w) => {
        await net.isolate(follower, 'peers');
        await until(
          async () => (await statesOf(c, topic, assignment.length)).every((s) => !s.isr.includes(follower) && s.isr.length === 2),
          'the follower out of every ISR',
          scaledTimeout(LAG_MS + 30_000),
          100,
        );
        // still registered: it talks to ZooKeeper, only its peers are cut off
        expect(await c.admin.getBrokerIds()).toContain(follower);
        await moreAcks(w, 200, 'while the follower is cut off');
        await net.heal(follower);
        await waitForFullIsr(c, topic, assignment.length, 60_000);
      },
    });
  });
});

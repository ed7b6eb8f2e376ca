/**
 * The fault mechanics of test-e2e/netns.ts on a real cluster: a broker cut off from clients stops
 * answering them but keeps replicating; one cut off from ZooKeeper loses its registration after the
 * session timeout and registers again after heal(); teardown leaves no namespace behind.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { portOpen } from '@samsa/local-cluster';
import { until } from '../harness.js';
import { NETNS_PORTS, NETNS_REGISTRY, NetnsTopology, describeNetns, sweepStaleNetns } from '../netns.js';
import { SESSION_TIMEOUT_MS, controllerOf, startNetnsCluster, type NetnsCluster } from './netns-cluster.js';

const netnsList = () => spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;

describeNetns('chaos – network namespace faults', () => {
  let k: NetnsCluster | undefined;
  beforeAll(async () => {
    k = await startNetnsCluster({ brokers: 3 });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it('netns – brokers serve on their namespace addresses; isolate(clients) cuts only the test process off, heal() restores it', async () => {
    const { c, net } = k!;
    for (const b of c.brokers) expect(b.address).toBe(`${net.brokerIp(b.id)}:${NETNS_PORTS.client}`);
    const ctrl = await controllerOf(c);
    const victim = (ctrl + 1) % 3;
    await net.isolate(victim, 'clients');
    expect(await net.rules(victim)).toEqual([`-A SAMSA-FAULT -s ${net.clientIp}/32 -j DROP`, `-A SAMSA-FAULT -d ${net.clientIp}/32 -j DROP`]);
    expect(await portOpen(net.brokerIp(victim), NETNS_PORTS.client, 1500)).toBe(false);
    for (const b of c.brokers.filter((x) => x.id !== victim)) expect(await portOpen(net.brokerIp(b.id), NETNS_PORTS.client, 1500)).toBe(true);
    // still in touch with ZooKeeper and its peers: registered, and the controller does not fail it
    expect(await c.admin.getBrokerIds()).toContain(victim);
    await net.heal(victim);
    expect(await net.rules(victim)).toEqual([]);
    expect(await portOpen(net.brokerIp(victim), NETNS_PORTS.client, 1500)).toBe(true);
  });

  it('netns – isolate(zookeeper): the broker leaves /brokers/ids after the session timeout and registers again after heal()', async () => {
    const { c, net } = k!;
    const ctrl = await controllerOf(c);
    const victim = (ctrl + 2) % 3;
    const t0 = Date.now();
    await net.isolate(victim, 'zookeeper');
    const gone = await until(
      async () => (!(await c.admin.getBrokerIds()).includes(victim) ? Date.now() - t0 : null),
      'the registration to vanish',
      SESSION_TIMEOUT_MS + 20_000,
      100,
    );
    // ZooKeeper expires a session a timeout after the last ping it got (pings go every timeout / 3)
    expect(gone).toBeGreaterThanOrEqual((SESSION_TIMEOUT_MS * 2) / 3 - 500);
    // clients still reach it (only ZooKeeper is cut off)
    expect(await portOpen(net.brokerIp(victim), NETNS_PORTS.client, 1500)).toBe(true);
    const h0 = Date.now();
    await net.heal(victim);
    await until(async () => (await c.admin.getBrokerIds()).includes(victim), 'the broker registered again', 60_000, 100);
    console.log(`[netns] broker ${victim} cut off from ZooKeeper: registration gone after ${gone} ms; registered again ${Date.now() - h0} ms after heal`);
  });

  it('netns – destroy() deletes the namespaces, the bridge and the root veth', async () => {
    const t = await NetnsTopology.create({ brokers: 2 });
    const names = [t.hub, t.zkNetns, t.brokerNetns(0), t.brokerNetns(1)];
    for (const n of names) expect(netnsList()).toContain(n);
    await t.destroy();
    for (const n of names) expect(netnsList()).not.toContain(n);
    await until(() => spawnSync('ip', ['link', 'show', t.rootVeth]).status !== 0, 'the root veth to go', 10_000, 100);
  });

  it('netns – sweepStaleNetns() deletes the namespaces of a run whose owner died without cleaning up', async () => {
    // a run "crashed": its registry file names a pid that is gone
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const names = [`samsa-stale-${process.pid}-a`, `samsa-stale-${process.pid}-b`];
    for (const n of names) expect(spawnSync('ip', ['netns', 'add', n]).status).toBe(0);
    mkdirSync(NETNS_REGISTRY, { recursive: true });
    const file = join(NETNS_REGISTRY, `stale-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ pid: dead, created: new Date().toISOString(), namespaces: names, rootVeth: `stale${process.pid % 1000}` }));
    expect(sweepStaleNetns()).toBeGreaterThanOrEqual(1);
    for (const n of names) expect(netnsList()).not.toContain(n);
    expect(existsSync(file)).toBe(false);
    // live runs are left alone
    expect(netnsList()).toContain(k!.net.hub);
  });
});

/**
 * The web console end to end, in headless Chromium (Debian's `chromium`, driven by playwright-core):
 * a real 3-broker cluster with metrics endpoints, `samsa console` as its own process, the pages read
 * as a user sees them. The overview shows 3 brokers and the controller; a broker killed with -9 has
 * its partitions' leaders move elsewhere on the partition map within seconds; a group's lag chart
 * moves while a producer runs; a broker with console.port serves the console itself; a console
 * pointed at a dead bootstrap shows the unreachable state. Screenshots go to
 * test-e2e/artifacts/console/ (gitignored). Without chromium the suite fails: it is a required part.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Admin } from '@samsa/client';
import { BrokerProcess, ManagedProcess, SAMSA_BIN, freePorts } from '@samsa/local-cluster';
import { TestCluster, describeCluster, until } from './harness.js';

const { Kafka, Partitioners, logLevel } = kafkajs;

const CHROMIUM = process.env['SAMSA_CHROMIUM'] ?? '/usr/bin/chromium';
/** What runs here as root in a container without a GPU or a big /dev/shm (docs/console.md). */
const CHROMIUM_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];
const ARTIFACTS = fileURLToPath(new URL('./artifacts/console/', import.meta.url));
const TOPIC = 'console-orders';
const GROUP = 'console-billing';

interface ConsoleProcess {
  proc: ManagedProcess;
  url: string;
}

async function startConsoleProcess(bootstrap: string, dir: string, name: string): Promise<ConsoleProcess> {
  const [port] = await freePorts(1);
  const proc = new ManagedProcess({
    name,
    command: process.execPath,
    args: [SAMSA_BIN, 'console', '--bootstrap-server', bootstrap, '--port', String(port), '--poll-interval-ms', '500'],
    logFile: join(dir, `${name}.log`),
    ...(process.env['SAMSA_E2E_VERBOSE'] === '1' ? { onLine: (n: string, l: string) => process.stderr.write(`[${n}] ${l}\n`) } : {}),
  });
  const url = `http://127.0.0.1:${port}/`;
  await until(async () => (await fetch(`${url}health`).catch(() => null))?.ok, `${name} answering /health`, 30_000, 100);
  return { proc, url };
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Leader cell text per partition, as the partition map shows it. */
function leadersOnPage(page: Page): Promise<Record<string, string>> {
  // a string: runs in the page (the test project has no DOM types)
  return page.evaluate(`Object.fromEntries([...document.querySelectorAll('[data-testid=partition-map] tr[data-partition]')]
    .map((r) => [r.dataset.partition, r.querySelector('[data-testid=leader]')?.textContent?.trim() ?? '']))`) as Promise<Record<string, string>>;
}

/** Waits until the element's text is `text` (the page re-renders after every poll). */
function waitForText(page: Page, selector: string, text: string, timeout: number): Promise<unknown> {
  return page.waitForFunction(`document.querySelector(${JSON.stringify(selector)})?.textContent === ${JSON.stringify(text)}`, null, { timeout });
}

describeCluster(
  'web console in headless Chromium (3 brokers, metrics, samsa console)',
  () => {
    let c: TestCluster;
    let browser: Browser;
    let page: Page;
    let main: ConsoleProcess | undefined;
    let dead: ConsoleProcess | undefined;
    const extra: BrokerProcess[] = [];
    const kafka = () =>
      new Kafka({ clientId: 'console-e2e', brokers: c.bootstrap.split(','), retry: { retries: 8, initialRetryTime: 200 }, logLevel: logLevel.NOTHING });

    beforeAll(async () => {
      if (!existsSync(CHROMIUM)) {
        throw new Error(
          `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium; .ci/run and scripts/bootstrap.mjs do) or set SAMSA_CHROMIUM`,
        );
      }
      mkdirSync(ARTIFACTS, { recursive: true });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      page = await browser.newPage({ viewport: { width: 1360, height: 860 } });
      c = await TestCluster.start({ metrics: true });
      main = await startConsoleProcess(c.bootstrap, c.dir, 'console');
    });

    afterAll(async () => {
      await browser?.close();
      await main?.proc.stop(5000);
      await dead?.proc.stop(5000);
      await Promise.all(extra.map((b) => b.stop(10_000)));
      await c?.stop();
    });

    it('console – overview shows the 3 brokers and the controller; empty states say what to do', async () => {
      await page.goto(`${main!.url}#/overview`);
      const controller = (await c.controllerId())!;
      await waitForText(page, '[data-testid=broker-count]', '3', 30_000);
      await expect.poll(() => page.textContent('[data-testid=controller]'), { timeout: 30_000 }).toBe(`broker ${controller}`);
      expect(await page.locator('[data-testid=brokers] tr[data-broker]').count()).toBe(3);
      // the controller epoch comes from the controller's metrics endpoint, discovered via DescribeConfigs
      await page.waitForSelector('[data-testid=controller-epoch]', { timeout: 30_000 });
      expect(await page.textContent('[data-testid=offline-count]')).toBe('0');
      await shot(page, '01-overview');
      for (const [hash, testId, text, file] of [
        ['#/topics', 'topics-empty', '--create --topic', '02-topics-empty'],
        ['#/groups', 'groups-empty', '-G my-group', '03-groups-empty'],
        ['#/timeline', 'timeline-empty', 'No controller events yet', '04-timeline-empty'],
      ] as const) {
        await page.goto(`${main!.url}${hash}`);
        const el = await page.waitForSelector(`[data-testid=${testId}]`, { timeout: 10_000 });
        expect(await el.textContent()).toContain(text);
        await shot(page, file);
      }
    });

    it("console – killing a broker (-9) moves its partitions' leaders elsewhere on the partition map within seconds", async () => {
      const admin = new Admin({ bootstrapServers: c.bootstrap });
      await admin.createTopics([{ name: TOPIC, numPartitions: 6, replicationFactor: 3 }]);
      await admin.close();
      await c.waitForLeaders(TOPIC, 6);
      // a group that consumed earlier: everything produced so far is committed, the group is then Empty
      const k = kafka();
      const producer = k.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 300 }, (_, i) => ({ key: `k${i}`, value: `order-${i}` })) });
      await producer.disconnect();
      const consumer = k.consumer({ groupId: GROUP });
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      let seen = 0;
      void consumer.run({ eachMessage: async () => void seen++ });
      await until(() => seen >= 300, 'the group consumed the first 300 records', 90_000, 100);
      await consumer.disconnect();

      await page.goto(`${main!.url}#/topics/${TOPIC}`);
      await page.waitForFunction(`document.querySelectorAll('[data-testid=partition-map] tr[data-partition]').length === 6`, null, { timeout: 30_000 });
      const controller = (await c.controllerId())!;
      const leaders = await until(async () => {
        const l = await leadersOnPage(page);
        return Object.values(l).every((x) => /^\d+$/.test(x)) ? l : undefined;
      }, 'the partition map showing 6 leaders');
      // kill a broker that is not the controller and leads something
      const victim = [0, 1, 2].filter((b) => b !== controller).find((b) => Object.values(leaders).includes(String(b)))!;
      expect(victim).toBeDefined();
      const led = Object.entries(leaders)
        .filter(([, l]) => l === String(victim))
        .map(([p]) => p);
      await shot(page, '05-partition-map-before-kill');
      const killedAt = Date.now();
      await c.broker(victim).kill();
      const moved = await until(
        async () => {
          const now = await leadersOnPage(page);
          return led.every((p) => /^\d+$/.test(now[p] ?? '') && now[p] !== String(victim)) ? now : undefined;
        },
        `leaders of partitions ${led.join(',')} moved off broker ${victim} on the page`,
        45_000,
        100,
      );
      const seconds = (Date.now() - killedAt) / 1000;
      process.stderr.write(
        `[console e2e] broker ${victim} killed: leaders of ${led.join(',')} moved on the page in ${seconds.toFixed(1)} s (ZooKeeper session timeout 6 s)\n`,
      );
      for (const p of led) expect(moved[p]).not.toBe(String(victim));
      expect(await page.textContent(`[data-testid=partition-map] th:has-text("b${victim}")`)).toContain('(down)');
      await shot(page, '06-partition-map-after-kill');

      await page.goto(`${main!.url}#/timeline`);
      await page.waitForSelector('[data-testid=timeline] li[data-kind=broker-down]', { timeout: 20_000 });
      await page.waitForSelector('[data-testid=timeline] li[data-kind=leader-election]', { timeout: 20_000 });
      expect(await page.textContent('[data-testid=timeline] li[data-kind=broker-down]')).toContain(`Broker ${victim} left the cluster`);
      // the controller's own account, from its GET /state-change: who elected whom, with which strategy
      const decision = await page.waitForSelector(`[data-testid=timeline] li[data-kind=leader-election][data-source=state-change]:has-text("${TOPIC}")`, {
        timeout: 20_000,
      });
      expect(await decision.textContent()).toContain(`controller ${controller} elected leader`);
      expect(await decision.textContent()).toContain('(offline');
      await shot(page, '07-timeline');
      await page.goto(`${main!.url}#/overview`);
      await waitForText(page, '[data-testid=broker-count]', '2', 20_000);
    });

    it("console – a consumer group's lag chart moves while a producer runs; throughput charts follow; a joining member shows its assignment", async () => {
      await page.goto(`${main!.url}#/groups/${GROUP}`);
      await page.waitForSelector('[data-testid=lag-chart]', { timeout: 30_000 });
      const lagNow = async () => Number((await page.textContent('[data-testid=lag-total]'))?.replace(/,/g, '') ?? NaN);
      const start = await until(async () => {
        const v = await lagNow();
        return Number.isFinite(v) ? v : undefined;
      }, 'a lag figure');
      const producer = kafka().producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      let producing = true;
      let sent = 0;
      const loop = (async () => {
        while (producing) {
          await producer.send({ topic: TOPIC, acks: 1, messages: Array.from({ length: 50 }, (_, i) => ({ key: `m${sent + i}`, value: `more-${sent + i}` })) });
          sent += 50;
          await new Promise((r) => setTimeout(r, 150));
        }
      })();
      try {
        // the lag rises step by step as the group (with no members) falls behind
        const values = new Set<number>();
        await until(
          async () => {
            const v = await lagNow();
            if (Number.isFinite(v) && v > start) values.add(v);
            return values.size >= 3;
          },
          'the lag figure rising through 3 values',
          60_000,
          200,
        );
        const chartLast = Number(await page.getAttribute('[data-testid=lag-chart]', 'data-last'));
        expect(chartLast).toBeGreaterThan(start);
        const d1 = await page.getAttribute('[data-testid=lag-chart] path', 'd');
        await until(async () => (await page.getAttribute('[data-testid=lag-chart] path', 'd')) !== d1, 'the lag chart redrawn', 20_000, 200);
        await shot(page, '08-group-lag');
        await page.goto(`${main!.url}#/throughput`);
        await until(
          async () => Number(await page.getAttribute('[data-testid=messages-chart]', 'data-last').catch(() => null)) > 0,
          'messages in per second above 0',
          30_000,
          200,
        );
        await shot(page, '09-throughput');
      } finally {
        producing = false;
        await loop.catch(() => undefined);
        await producer.disconnect();
      }
      expect(sent).toBeGreaterThan(0);
      // a member joins: its assignment shows, and the lag falls back to 0 as it catches up
      const consumer = kafka().consumer({ groupId: GROUP });
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC });
      void consumer.run({ eachMessage: async () => undefined });
      try {
        await page.goto(`${main!.url}#/groups/${GROUP}`);
        // (a member is listed with no assignment while the group completes its rebalance)
        await page.waitForSelector(`[data-testid=members] td:has-text("${TOPIC}: 0, 1, 2, 3, 4, 5")`, { timeout: 60_000 });
        expect(await page.locator('[data-testid=members] tr').count()).toBe(2);
        await waitForText(page, '[data-testid=lag-total]', '0', 60_000);
        await shot(page, '10-group-member-caught-up');
      } finally {
        await consumer.disconnect();
      }
      await page.goto(`${main!.url}#/groups`);
      await page.waitForSelector(`[data-testid=groups] tr[data-group="${GROUP}"]`, { timeout: 10_000 });
      await shot(page, '11-groups');
      await page.goto(`${main!.url}#/topics`);
      await page.waitForSelector(`[data-testid=topics] tr[data-topic="${TOPIC}"]`, { timeout: 10_000 });
      await shot(page, '12-topics');
    });

    it('console – a broker with console.port serves the console itself', async () => {
      const [port, controlPort, metricsPort, consolePort] = await freePorts(4);
      const b = new BrokerProcess({
        id: 3,
        port: port!,
        controlPort: controlPort!,
        metricsPort: metricsPort!,
        zookeeperConnect: c.zk.connectString('/samsa'),
        dir: join(c.dir, 'broker-3'),
        overrides: { 'console.port': String(consolePort) },
        logToFile: true,
      });
      extra.push(b);
      await b.launch();
      const url = `http://127.0.0.1:${consolePort}/`;
      await until(async () => (await fetch(`${url}health`).catch(() => null))?.ok, "the broker's console answering", 60_000, 200);
      await page.goto(`${url}#/overview`);
      // two survivors of the kill and the new broker 3
      await waitForText(page, '[data-testid=broker-count]', '3', 30_000);
      expect(await page.locator('[data-testid=brokers] tr[data-broker="3"]').count()).toBe(1);
      await shot(page, '13-broker-hosted-console');
      // the main console saw it join
      await page.goto(`${main!.url}#/timeline/broker-up`);
      await page.waitForSelector('[data-testid=timeline] li[data-kind=broker-up]', { timeout: 20_000 });
    });

    it('console – the error states: a dead bootstrap shows the unreachable message; a stopped console server says so', async () => {
      const [free] = await freePorts(1);
      dead = await startConsoleProcess(`127.0.0.1:${free}`, c.dir, 'console-dead');
      await page.goto(`${dead.url}#/overview`);
      const el = await page.waitForSelector('[data-testid=error-state]', { timeout: 30_000 });
      const text = (await el.textContent()) ?? '';
      expect(text).toContain('Cluster unreachable');
      expect(text).toContain(`Cannot reach the cluster at 127.0.0.1:${free}`);
      expect(text).toContain('What to do');
      expect(text).toContain('samsa cluster status');
      expect(await page.textContent('[data-testid=connection]')).toBe('cluster unreachable');
      await shot(page, '14-error-unreachable');
      // every page shows it, not an empty state
      await page.goto(`${dead.url}#/topics`);
      await page.waitForSelector('[data-testid=error-state]', { timeout: 10_000 });
      await dead.proc.stop(5000);
      await page.waitForSelector('[data-testid=server-lost]', { timeout: 20_000 });
      expect(await page.textContent('[data-testid=server-lost]')).toContain('samsa console');
      await shot(page, '15-error-server-lost');
    });
  },
  { processesOnly: 'starts `samsa console` and a broker process on this machine' },
);

// partitions (by name only): the control plane at scale. For each size in --sizes (partitions of
// one RF=3 topic on 3 brokers), --rounds times on a fresh cluster (ZooKeeper + 3 broker processes,
// zookeeper.session.timeout.ms 6000):
//  1. create: CreateTopics until every partition has a leader in every broker's Metadata;
//  2. RSS and open file handles per 1,000 hosted partition replicas (growth over the idle broker,
//     measured once all ISRs are full);
//  3. controlled shutdown (SIGTERM) of a broker that is not the controller: until its process
//     exits, and how long after its exit any surviving broker's Metadata still named it as a
//     leader (0 = never: the new leaders reached every broker before it was let go);
//  4. restart of that broker: until it is back in every ISR (every broker's Metadata);
//  5. preferred leader election of every partition (ElectLeaders): until every broker's Metadata
//     shows each partition led by its first replica;
//  6. controller kill -9: until every partition has a live leader in every surviving broker's
//     Metadata, printed as "session timeout + X s".
// Figures are medians over the rounds, per size, in seconds. Progress and per-round figures on stderr.
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Admin, Connection, ElectionType, metadataRequestBody } from '@samsa/client';
import { API_KEYS } from '@samsa/protocol';
import { startCluster, until } from './lib/cluster.mjs';
import { formatProfile, summarizeProfile } from './lib/cpuprofile.mjs';
import { log, median, round } from './lib/report.mjs';
import { REPO_ROOT } from './lib/script.mjs';

export const description =
  '3 brokers, one RF=3 topic per size: create, controlled shutdown (exit, stale leaders after exit), restart to full ISR, preferred election, controller kill -9 (s); RSS and fds per 1,000 partitions';
export const byNameOnly = true;

export const defaults = {
  /** Partition counts, comma-separated (the same figures at each, so the growth is visible). */
  sizes: '1000,10000',
  rounds: 3,
  /** Longest wait for any one step, in seconds. */
  stepTimeout: 300,
  /** CPU profiles of every broker (bench/profiles/), summarised on stderr; the controller kill -9 is skipped. */
  profile: false,
  /** Extra broker configs, `key=value` comma-separated (e.g. controller.hot.standby.enable=false for an A/B run). */
  brokerConfig: '',
};

const PROFILE_DIR = join(REPO_ROOT, 'bench', 'profiles');

const SESSION_TIMEOUT_MS = 6000; // what @samsa/local-cluster's brokers run with
const TOPIC = 'scale';

/** VmRSS in MiB and open file descriptors of a process. */
function processFootprint(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return { rssMiB: kb / 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** The `msg` (and error message) of each pino line at level error or fatal in a log file, shortened. */
function errorLogLines(file) {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"level":5') && !line.includes('"level":6')) continue;
    try {
      const m = JSON.parse(line);
      if (m.level >= 50) out.push(`${m.msg}${m.err?.message ? `: ${m.err.message}` : ''}`.slice(0, 200));
    } catch {
      // not a log line
    }
  }
  return out;
}

/** One connection per broker, for Metadata as each broker answers it. */
async function metadataProbes(brokers) {
  const probes = new Map();
  for (const b of brokers) {
    const conn = await Connection.connect({ host: b.host, port: b.o.port, nodeId: b.id, clientId: 'samsa-bench-partitions', requestTimeoutMs: 60_000 });
    probes.set(b.id, conn);
  }
  return {
    /** The topic's partitions as broker `id` sees them: [{ partitionIndex, leaderId, replicaNodes, isrNodes }]. */
    async partitions(id) {
      const res = await probes.get(id).request(API_KEYS.Metadata, (v) => metadataRequestBody([TOPIC], v));
      const t = res.body.topics.find((x) => x.name === TOPIC);
      return { controllerId: res.body.controllerId, partitions: t && t.errorCode === 0 ? t.partitions : [] };
    },
    async close(id) {
      const conn = probes.get(id);
      probes.delete(id);
      await conn?.close().catch(() => undefined);
    },
    async closeAll() {
      for (const id of [...probes.keys()]) await this.close(id);
    },
    get ids() {
      return [...probes.keys()];
    },
  };
}

/** Waits until `ok(partitions)` holds in the Metadata of every broker in `ids`; returns the seconds since `t0`. */
async function untilEveryBroker(probes, ids, count, ok, what, t0, timeoutMs) {
  await until(
    async () => {
      for (const id of ids) {
        const { partitions } = await probes.partitions(id).catch(() => ({ partitions: [] }));
        if (partitions.length !== count || !partitions.every(ok)) return false;
      }
      return true;
    },
    what,
    timeoutMs,
  );
  return (performance.now() - t0) / 1000;
}

async function oneRound(size, o) {
  const timeoutMs = o.stepTimeout * 1000;
  const overrides = Object.fromEntries(
    String(o.brokerConfig || '')
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const c = await startCluster({ brokers: 3, log, overrides, nodeFlags: o.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [] });
  const probes = await metadataProbes(c.brokers);
  const bootstrap = c.brokers.map((b) => b.address).join(',');
  const admin = new Admin({ bootstrapServers: bootstrap, clientId: 'samsa-bench-partitions', requestTimeoutMs: timeoutMs, defaultApiTimeoutMs: timeoutMs });
  const allIds = c.brokers.map((b) => b.id);
  const r = {};
  try {
    const idle = c.brokers.map((b) => processFootprint(b.pid));

    // 1. create
    let t0 = performance.now();
    await admin.createTopics([{ name: TOPIC, numPartitions: size, replicationFactor: 3 }], { timeoutMs });
    r.createAnsweredS = (performance.now() - t0) / 1000;
    r.createS = await untilEveryBroker(probes, allIds, size, (p) => p.leaderId >= 0, `leaders of ${size} partitions in every broker's Metadata`, t0, timeoutMs);
    log(`  ${size}: create answered in ${round(r.createAnsweredS, 2)} s, all leaders in every broker's Metadata at ${round(r.createS, 2)} s`);
    await untilEveryBroker(probes, allIds, size, (p) => p.isrNodes.length === 3, 'full ISRs', t0, timeoutMs);

    // 2. footprint (every broker hosts a replica of every partition)
    const loaded = c.brokers.map((b) => processFootprint(b.pid));
    r.rssMiBPer1000 = median(loaded.map((x, i) => ((x.rssMiB - idle[i].rssMiB) * 1000) / size));
    r.fdsPer1000 = median(loaded.map((x, i) => ((x.fds - idle[i].fds) * 1000) / size));
    log(`  ${size}: RSS ${loaded.map((x) => round(x.rssMiB, 0)).join('/')} MiB, fds ${loaded.map((x) => x.fds).join('/')}`);

    // 3. controlled shutdown of a broker that is not the controller
    const { controllerId } = await probes.partitions(allIds[0]);
    const victim = c.brokers.find((b) => b.id !== controllerId);
    const survivors = allIds.filter((id) => id !== victim.id);
    const led = (await probes.partitions(victim.id)).partitions.filter((p) => p.leaderId === victim.id).length;
    await probes.close(victim.id);
    t0 = performance.now();
    let exitedAt = null;
    let lastStaleSentAt = null;
    const exited = victim.process.exited.then(() => (exitedAt = performance.now()));
    victim.process.signal('SIGTERM');
    // poll the survivors' Metadata until the victim has exited and a full pass sent after its exit names it nowhere
    for (;;) {
      const passStartedAt = performance.now();
      let named = false;
      for (const id of survivors) {
        const sentAt = performance.now();
        const { partitions } = await probes.partitions(id).catch(() => ({ partitions: [] }));
        if (partitions.some((p) => p.leaderId === victim.id)) {
          named = true;
          if (exitedAt !== null && sentAt > exitedAt) lastStaleSentAt = sentAt;
        }
      }
      if (exitedAt !== null && passStartedAt > exitedAt && !named) break;
      if (performance.now() - t0 > timeoutMs) throw new Error('controlled shutdown: timed out');
    }
    await exited;
    r.shutdownExitS = (exitedAt - t0) / 1000;
    r.staleAfterExitS = lastStaleSentAt === null ? 0 : (lastStaleSentAt - exitedAt) / 1000;
    log(
      `  ${size}: controlled shutdown of broker ${victim.id} (leading ${led}): exited at ${round(r.shutdownExitS, 2)} s, named leader ${round(r.staleAfterExitS, 2)} s after its exit`,
    );

    // 4. restart until back in every ISR
    t0 = performance.now();
    await victim.launch();
    await victim.waitReady(timeoutMs);
    const fresh = await metadataProbes([victim]);
    const probesAll = {
      partitions: (id) => (id === victim.id ? fresh.partitions(id) : probes.partitions(id)),
    };
    r.restartIsrS = await untilEveryBroker(
      probesAll,
      allIds,
      size,
      (p) => p.isrNodes.includes(victim.id),
      `broker ${victim.id} back in every ISR`,
      t0,
      timeoutMs,
    );
    log(`  ${size}: broker ${victim.id} restarted and back in every ISR at ${round(r.restartIsrS, 2)} s`);

    // 5. preferred election of every partition
    t0 = performance.now();
    await admin.electLeaders(null, ElectionType.PREFERRED, { timeoutMs });
    r.electAnsweredS = (performance.now() - t0) / 1000;
    r.preferredS = await untilEveryBroker(
      probesAll,
      allIds,
      size,
      (p) => p.leaderId === p.replicaNodes[0],
      'preferred leaders in every Metadata',
      t0,
      timeoutMs,
    );
    log(`  ${size}: preferred election answered at ${round(r.electAnsweredS, 2)} s, in every broker's Metadata at ${round(r.preferredS, 2)} s`);

    // 6. controller kill -9 (skipped with --profile: a killed broker writes no profile, and the
    // controller's is the one a controlled shutdown or an election is read from)
    if (o.profile) {
      log(`  ${size}: controller kill -9 skipped (--profile)`);
      r.controllerFailoverOverSessionS = NaN;
    } else {
      const { controllerId: current } = await probes.partitions(survivors[0]);
      const controller = c.brokers.find((b) => b.id === current);
      const rest = allIds.filter((id) => id !== current);
      if (controller.id === victim.id) await fresh.closeAll();
      else await probes.close(controller.id);
      t0 = performance.now();
      await controller.kill();
      const failoverS = await untilEveryBroker(
        probesAll,
        rest,
        size,
        (p) => p.leaderId >= 0 && p.leaderId !== controller.id,
        'a live leader for every partition in every surviving broker',
        t0,
        timeoutMs,
      );
      r.controllerFailoverOverSessionS = failoverS - SESSION_TIMEOUT_MS / 1000;
      log(`  ${size}: controller ${controller.id} killed: every partition led by a live broker everywhere at ${round(failoverS, 2)} s`);
    }
    await fresh.closeAll();

    // 7. error-level lines (pino level 50 and above) any broker logged during the round: issue #30 wants none
    const errors = c.brokers.flatMap((b) => errorLogLines(join(b.o.dir, 'broker.log')).map((line) => `broker ${b.id}: ${line}`));
    r.errorLogLines = errors.length;
    log(`  ${size}: error-level log lines: ${errors.length}${errors.length ? `, e.g.\n    ${errors.slice(0, 5).join('\n    ')}` : ''}`);
  } finally {
    await probes.closeAll();
    await admin.close().catch(() => undefined);
    await c.stop();
  }
  return r;
}

export async function run(opts, report) {
  const o = { ...defaults, ...opts };
  if (o.profile) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(PROFILE_DIR, { recursive: true });
  }
  const sizes = String(o.sizes)
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
  const all = {};
  for (const size of sizes) {
    const rounds = [];
    for (let i = 1; i <= o.rounds; i++) {
      log(`partitions ${size}: round ${i} of ${o.rounds}`);
      rounds.push(await oneRound(size, o));
    }
    all[size] = rounds;
    const m = (k) => median(rounds.map((x) => x[k]));
    const name = (what) => `partitions-${size} ${what}`;
    report.figure({
      name: name('create'),
      value: m('createS'),
      unit: 's',
      digits: 2,
      text: `all leaders in every broker's Metadata; CreateTopics answered at ${round(m('createAnsweredS'), 2)} s`,
    });
    report.figure({ name: name('controlled shutdown exit'), value: m('shutdownExitS'), unit: 's', digits: 2 });
    report.figure({
      name: name('stale leader after exit'),
      value: m('staleAfterExitS'),
      unit: 's',
      digits: 2,
      text: "a surviving broker's Metadata still naming the exited broker",
    });
    report.figure({ name: name('restart to full ISR'), value: m('restartIsrS'), unit: 's', digits: 2 });
    report.figure({
      name: name('preferred election'),
      value: m('preferredS'),
      unit: 's',
      digits: 2,
      text: `in every broker's Metadata; ElectLeaders answered at ${round(m('electAnsweredS'), 2)} s`,
    });
    report.figure({
      name: name('controller kill -9'),
      value: m('controllerFailoverOverSessionS'),
      unit: 's',
      digits: 2,
      line: `${name('controller kill -9')}: session timeout + ${round(m('controllerFailoverOverSessionS'), 2)} s (every partition led by a live broker in every broker's Metadata)`,
    });
    report.figure({ name: name('RSS per 1,000 partitions'), value: m('rssMiBPer1000'), unit: 'MiB', digits: 1 });
    report.figure({ name: name('open files per 1,000 partitions'), value: m('fdsPer1000'), unit: 'fds', digits: 0 });
    report.figure({
      name: name('error-level log lines'),
      value: rounds.reduce((n, x) => n + x.errorLogLines, 0),
      unit: 'lines',
      digits: 0,
      text: `every broker, all ${rounds.length} round(s)`,
    });
  }
  report.detail('partitions', all);
  if (o.profile) {
    for (const f of readdirSync(PROFILE_DIR).filter((x) => x.endsWith('.cpuprofile'))) {
      process.stderr.write(`${formatProfile(summarizeProfile(join(PROFILE_DIR, f), 30), `CPU profile ${join('bench', 'profiles', f)}`)}\n`);
    }
  }
}

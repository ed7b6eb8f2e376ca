// produce-rf3 (by name only): ZooKeeper + 3 Samsa broker processes, a topic with replication
// factor 3 and min.insync.replicas=2 whose partitions are led by all three brokers (replicas of
// partition p: p, p+1, p+2 mod 3, the first one leads), acks=all, 1 KiB records.
//  1. NATS JetStream R=3 (peer-nats/run.sh of the reference scripts, SAMSA_BENCH_REFERENCE_DIR)
//     publishes --nats-msgs 1 KiB messages first, before the cluster starts (so the two never
//     share the machine).
//  2. Throughput: one connection per leader, --inflight Produce requests outstanding on each, a
//     request carrying one batch of --records-per-batch records for each partition that broker
//     leads; --mib of data per round in total. Printed as msgs/s and MB/s (record values,
//     10^6 bytes) beside the NATS figure: the ratio is of msgs/s.
//  3. End-to-end latency at a paced --latency-mbps (bench/lib/latency.mjs): record values carry
//     their due time, consumers long-poll Fetch on the leaders; p50/p99/p99.9 in ms.
// The load average (1/5/15 min) is recorded before the run and after each phase: the box may be
// shared, and our own 3 brokers + ZooKeeper + load generator are part of it.
// --secure: steps 2 and 3 run twice in the same run, on a plaintext cluster and then on a cluster
// whose every listener is SSL (client, inter-broker, control plane with client certificates), the
// load generator connecting over TLS; the figure produce-rf3.tls prints both side by side and the
// ratios secure / plaintext (msgs/s, MB/s, latency p50 / p99).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startCluster } from './lib/cluster.mjs';
import { formatProfile, summarizeProfile } from './lib/cpuprofile.mjs';
import { pacedEndToEnd } from './lib/latency.mjs';
import { produceLoad, waitUntilProducible } from './lib/producer.mjs';
import { log, median, round } from './lib/report.mjs';
import { REPO_ROOT } from './lib/script.mjs';
import { runNats } from './peer-nats.mjs';

export const description =
  '3 brokers, RF=3, min.insync.replicas=2, acks=all, 1 KiB records: msgs/s vs NATS JetStream R=3, then end-to-end latency at a paced 10 MB/s';
export const byNameOnly = true;

export const defaults = {
  partitions: 3,
  /** Data per throughput round, over all leaders. */
  mib: 512,
  rounds: 3,
  /** A round also ends after this long (in-flight requests are still waited for). */
  seconds: 30,
  inflight: 5,
  /**
   * Records per partition batch: 250 x 1 KiB ≈ 256 KiB, so that one follower fetch
   * (replica.fetch.max.bytes = 1 MiB) carries ~4 batches.
   */
  recordsPerBatch: 250,
  warmupMib: 128,
  /** No new throughput round starts when it would likely end past this many seconds (at least one runs). */
  budget: 75,
  minInsync: 2,
  /** Run NATS JetStream R=3 for the comparison (--nats=false skips it). */
  nats: true,
  natsMsgs: 100000,
  natsInflight: 1024,
  latencyMbps: 10,
  latencySeconds: 20,
  latencyWarmup: 3,
  latencyInflight: 5,
  profile: false,
  /** Extra node flags for the brokers, space-separated (e.g. --node-flags='--trace-gc'). */
  nodeFlags: '',
  /** Run one phase only: 'latency' skips NATS and the measured throughput rounds (not the warm-up) and reports only the latency figure. */
  only: '',
  /** Extra environment for the brokers, comma-separated NAME=value (e.g. --broker-env=SAMSA_TRACE_LATENCY=1). */
  brokerEnv: '',
  /** Also measure on a cluster with every listener SSL (TLS cost beside the plaintext figures, same run). */
  secure: false,
};

const VALUE_SIZE = 1024;

/** CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid) {
  return cpuSplit(pid).total;
}

/** { user, system, total } CPU seconds of a process so far (all threads), from /proc/<pid>/stat. */
function cpuSplit(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(f[11]) / 100;
    const system = Number(f[12]) / 100;
    return { user, system, total: user + system };
  } catch {
    return { user: NaN, system: NaN, total: NaN };
  }
}

/** Share of the brokers' CPU time since `before` (cpuSplit per broker) spent in the kernel, in %. */
function systemPct(pids, before) {
  let sys = 0;
  let total = 0;
  pids.forEach((pid, i) => {
    const now = cpuSplit(pid);
    sys += now.system - before[i].system;
    total += now.total - before[i].total;
  });
  return total > 0 ? Math.round((sys / total) * 100) : NaN;
}

/**
 * The brokers' 'latency trace' log lines (SAMSA_TRACE_LATENCY=1, see
 * packages/broker/src/trace/latency-trace.ts) written since `since`: per stage n / p50 / p99 / max ms.
 */
function printLatencyTraces(cluster, since) {
  cluster.brokers.forEach((b, id) => {
    let lines = [];
    try {
      lines = readFileSync(join(cluster.dir, `broker-${id}`, 'broker.log'), 'utf8').split('\n');
    } catch {
      return;
    }
    for (const line of lines) {
      if (!line.includes('"latency trace"')) continue;
      const t = JSON.parse(line);
      if (t.time < since) continue;
      const stages = Object.entries(t.stages)
        .map(([k, v]) => `${k} ${v.n}× ${v.p50}/${v.p99}/${v.max}`)
        .join('; ');
      log(`broker ${id} trace (n× p50/p99/max ms): ${stages}; event loop delay ${t.eventLoopDelay.p50}/${t.eventLoopDelay.p99}/${t.eventLoopDelay.max}`);
    }
  });
}

const load = () => loadavg().map((x) => round(x, 2));
const loadText = (l) => `load average ${l.join(', ')}`;

/** Dirty page cache in MB (/proc/meminfo), or -1 where unknown. */
function dirtyMegabytes() {
  try {
    const m = /^Dirty:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : -1;
  } catch {
    return -1;
  }
}

export async function run(opts, report) {
  const o = { ...defaults, ...opts };
  if (o.only !== '' && o.only !== 'latency') throw new Error(`--only ${o.only}: only 'latency' is known`);
  const latencyOnly = o.only === 'latency';
  if (o.profile && o.secure) throw new Error('--profile and --secure: profile one cluster at a time');
  if (latencyOnly) o.nats = false;
  const loads = { before: load() };
  log(`produce-rf3: ${loadText(loads.before)} before the run`);

  // 1. the peer, alone on the machine
  let nats = null;
  if (o.nats) {
    nats = (await runNats({ msgs: o.natsMsgs, inflight: o.natsInflight, size: VALUE_SIZE, replicas: 3 }, { timeoutMs: 180_000 })).publish;
    loads.afterNats = load();
    log(`NATS JetStream R=3 publish: ${nats.msgsPerSec} msgs/s, ${nats.mbps} MB/s in ${nats.seconds} s (${loadText(loads.afterNats)})`);
  }

  const plain = await measure(o, { latencyOnly, loads, secure: false });
  const secure = o.secure ? await measure(o, { latencyOnly, loads: (loads.tls = {}), secure: true }) : null;
  const { rounds, lat, latBrokerCpu, latSystemPct, latCpuUsPerRecord, brokerPids, profDir } = plain;

  // figures
  if (!latencyOnly) {
    const msgsPerSec = median(rounds.map((x) => x.msgsPerSec));
    const mbps = median(rounds.map((x) => x.mbps));
    const ratio = nats ? msgsPerSec / nats.msgsPerSec : undefined;
    const vsNats = nats ? `${round(ratio, 1)}× NATS JetStream R=3 at ${nats.msgsPerSec} msgs/s` : 'NATS not run (--nats=false)';
    report.figure({
      name: 'produce-rf3',
      value: msgsPerSec,
      digits: 0,
      unit: 'msgs/s',
      mbps: round(mbps),
      ...(nats
        ? {
            reference: {
              name: 'NATS JetStream R=3 publish',
              value: nats.msgsPerSec,
              unit: 'msgs/s',
              mbps: nats.mbps,
              seconds: nats.seconds,
              msgs: nats.msgs,
              inflight: nats.inflight,
            },
          }
        : {}),
      ...(ratio !== undefined ? { ratio } : {}),
      line: `produce-rf3: ${Math.round(msgsPerSec)} msgs/s, ${round(mbps)} MB/s (${vsNats})`,
      setup: `3 brokers, ${o.partitions} partitions RF=3 min.insync.replicas=${o.minInsync}, acks=all, ${o.recordsPerBatch} x 1 KiB records per partition batch, ${o.inflight} requests in flight per leader connection, ${o.mib} MiB per round, median of ${rounds.length}`,
      runs: rounds.map(roundFigures),
      load: loads,
      profiled: o.profile,
    });
  }
  if (secure) tlsFigure(plain, secure, latencyOnly, report);
  const l = lat.latency;
  report.figure({
    name: 'produce-rf3.latency',
    value: l.p99,
    digits: 2,
    unit: 'ms (p99)',
    p50: round(l.p50, 2),
    p90: round(l.p90, 2),
    p99: round(l.p99, 2),
    p999: round(l.p999, 2),
    max: round(l.max, 2),
    mean: round(l.mean, 2),
    records: l.count,
    produceAck: Object.fromEntries(Object.entries(lat.produceAck).map(([k, v]) => [k, k === 'count' ? v : round(v, 2)])),
    achievedMbps: round(lat.mbps, 2),
    lost: lat.lost,
    timeline: lat.timeline,
    brokerCpuPct: latBrokerCpu,
    brokerCpuUsPerRecord: latCpuUsPerRecord,
    brokerSystemPct: latSystemPct,
    load: loads.afterLatency,
    line:
      `produce-rf3.latency: p50 ${round(l.p50, 2)} ms, p99 ${round(l.p99, 2)} ms, p99.9 ${round(l.p999, 2)} ms, max ${round(l.max, 1)} ms ` +
      `(end-to-end send → fetched, ${o.latencyMbps} MB/s paced, acks=all, ${l.count} records over ${o.latencySeconds} s; ${loadText(loads.afterLatency)})`,
  });

  if (o.profile) {
    const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
    if (files.length === 0) log(`no .cpuprofile in ${profDir} (did the brokers exit cleanly?)`);
    const summaries = {};
    for (const f of files) {
      const pid = Number(/^CPU\.\d+\.\d+\.(\d+)\./.exec(f)?.[1]); // CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile
      const id = brokerPids.indexOf(pid);
      const label = id >= 0 ? `broker ${id}` : f;
      const summary = summarizeProfile(join(profDir, f), 25, { from: 'handlers/produce.js' });
      process.stderr.write(`${formatProfile(summary, `${label} CPU profile (${join('bench', 'profiles', f)})`)}\n`);
      summaries[label] = { file: join('bench', 'profiles', f), ...summary };
    }
    report.detail('produce-rf3.profile', summaries);
  }
}

/** The fields of a throughput round in the figures. */
const roundFigures = (x) => ({ ...x, msgsPerSec: Math.round(x.msgsPerSec), mbps: round(x.mbps), batchMbps: round(x.batchMbps), seconds: round(x.seconds, 2) });

/**
 * Steps 2 and 3 on a new cluster (plaintext, or every listener SSL with `secure`): the throughput
 * rounds and the paced latency phase. Returns { rounds, lat, latBrokerCpu, latSystemPct,
 * latCpuUsPerRecord, brokerPids, profDir }; `loads` gets the load averages after each phase.
 */
async function measure(o, { latencyOnly, loads, secure }) {
  const say = (line) => log(`${secure ? '[tls] ' : ''}${line}`);
  const profDir = join(REPO_ROOT, 'bench', 'profiles');
  if (o.profile) {
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir, { recursive: true });
  }
  const cluster = await startCluster({
    brokers: 3,
    env: Object.fromEntries(
      String(o.brokerEnv)
        .split(',')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    ),
    nodeFlags: [...(o.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...String(o.nodeFlags).split(/\s+/).filter(Boolean)],
    tls: secure,
    log: say,
  });
  const brokerPids = cluster.brokers.map((b) => b.pid);
  const assignment = (n) => new Map(Array.from({ length: n }, (_, p) => [p, [0, 1, 2].map((i) => (p + i) % 3)]));
  const topicConfig = { 'min.insync.replicas': String(o.minInsync) };
  const leadersOf = async (topic) => {
    const states = await cluster.partitionStates(topic, o.partitions);
    const by = new Map();
    states.forEach((s, p) => by.set(s.leader, [...(by.get(s.leader) ?? []), p]));
    return [...by].sort((a, b) => a[0] - b[0]).map(([id, partitions]) => ({ id, host: cluster.host, port: cluster.ports[id], partitions }));
  };

  // 2. throughput
  const rounds = [];
  const topic = 'bench-rf3';
  await cluster.createTopic(topic, assignment(o.partitions), topicConfig, { fullIsr: true });
  const leaders = await leadersOf(topic);
  say(
    `${topic}: ${o.partitions} partitions, RF=3, min.insync.replicas=${o.minInsync}; leaders ${leaders.map((l) => `broker ${l.id} → [${l.partitions}]`).join(', ')}`,
  );
  for (const l of leaders) for (const p of l.partitions) await waitUntilProducible({ host: l.host, port: l.port, tls: cluster.tls, topic, partition: p });

  const roundOf = async (totalBytes, maxSeconds) => {
    const cpu0 = brokerPids.map(cpuSeconds);
    const split0 = brokerPids.map(cpuSplit);
    const client0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const per = await Promise.all(
      leaders.map((l) =>
        produceLoad({
          host: l.host,
          port: l.port,
          tls: cluster.tls,
          topic,
          partitions: l.partitions,
          acks: -1,
          inflight: o.inflight,
          recordsPerBatch: o.recordsPerBatch,
          valueSize: VALUE_SIZE,
          totalBytes: (totalBytes * l.partitions.length) / o.partitions,
          maxSeconds,
        }),
      ),
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const client = process.cpuUsage(client0);
    const records = per.reduce((n, r) => n + r.records, 0);
    const brokerCpuSeconds = brokerPids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - cpu0[i], 0);
    return {
      seconds,
      records,
      requests: per.reduce((n, r) => n + r.requests, 0),
      msgsPerSec: records / seconds,
      mbps: (records * VALUE_SIZE) / seconds / 1e6,
      batchMbps: per.reduce((n, r) => n + r.batchBytes, 0) / seconds / 1e6,
      brokerCpuPct: brokerPids.map((pid, i) => Math.round(((cpuSeconds(pid) - cpu0[i]) / seconds) * 100)),
      // CPU the three brokers spent per record (all threads): what a shared machine does not distort much
      brokerCpuUsPerRecord: round((brokerCpuSeconds / records) * 1e6, 1),
      brokerSystemPct: systemPct(brokerPids, split0),
      clientCpuPct: Math.round(((client.user + client.system) / 1e6 / seconds) * 100),
      perLeader: per.map((r, i) => ({
        broker: leaders[i].id,
        partitions: leaders[i].partitions,
        msgsPerSec: Math.round(r.recordsPerSec),
        seconds: round(r.seconds, 2),
      })),
    };
  };

  say(`warm-up: ${o.warmupMib} MiB`);
  await roundOf(o.warmupMib * 1024 * 1024, 30);
  const tRounds = Date.now();
  // --only latency: the warm-up round still runs (JIT, page cache), as before the latency phase of a full run
  for (let r = 1; r <= (latencyOnly ? 0 : o.rounds); r++) {
    const elapsed = (Date.now() - tRounds) / 1000;
    if (r > 1 && elapsed + elapsed / (r - 1) > o.budget) {
      say(`stopping after ${r - 1} round(s): another would end past the ${o.budget} s budget (--budget)`);
      break;
    }
    const res = await roundOf(o.mib * 1024 * 1024, o.seconds);
    res.load = load();
    rounds.push(res);
    say(
      `round ${r}/${o.rounds}: ${Math.round(res.msgsPerSec)} msgs/s, ${round(res.mbps)} MB/s in ${round(res.seconds, 2)} s ` +
        `(${res.requests} requests; broker cpu ${res.brokerCpuPct.map((c) => `${c}%`).join('/')} = ${res.brokerCpuUsPerRecord} µs per record (${res.brokerSystemPct}% in the kernel), load generator cpu ${res.clientCpuPct}%; ${loadText(res.load)})`,
    );
  }
  loads.afterThroughput = load();
  // the throughput rounds leave gigabytes of dirty page cache (3 replicas x --mib per round): write
  // it out first, so the latency phase measures 10 MB/s, not the kernel's writeback of the rounds
  const dirtyMb = dirtyMegabytes();
  const syncStart = Date.now();
  execFileSync('sync');
  say(`sync before the latency phase: ${dirtyMb} MB dirty, written out in ${round((Date.now() - syncStart) / 1000, 1)} s`);

  // 3. end-to-end latency at a paced rate
  const latTopic = 'bench-rf3-latency';
  await cluster.createTopic(latTopic, assignment(o.partitions), topicConfig, { fullIsr: true });
  const latLeaders = await leadersOf(latTopic);
  for (const l of latLeaders)
    for (const p of l.partitions) await waitUntilProducible({ host: l.host, port: l.port, tls: cluster.tls, topic: latTopic, partition: p });
  say(
    `latency: ${o.latencyMbps} MB/s paced for ${o.latencyWarmup} + ${o.latencySeconds} s, acks=all, ${o.latencyInflight} in flight per leader, long-poll Fetch on ${latLeaders.length} leaders`,
  );
  const latStart = Date.now();
  const cpuL0 = brokerPids.map(cpuSeconds);
  const splitL0 = brokerPids.map(cpuSplit);
  // waitUntilProducible wrote one record per partition: the consumers start after it
  const lat = await pacedEndToEnd({
    leaders: latLeaders,
    topic: latTopic,
    mbps: o.latencyMbps,
    valueSize: VALUE_SIZE,
    acks: -1,
    inflight: o.latencyInflight,
    seconds: o.latencySeconds,
    warmupSeconds: o.latencyWarmup,
    startOffset: 1n,
    tls: cluster.tls,
  });
  const latBrokerCpu = brokerPids.map((pid, i) => Math.round(((cpuSeconds(pid) - cpuL0[i]) / (o.latencySeconds + o.latencyWarmup)) * 100));
  const latSystemPct = systemPct(brokerPids, splitL0);
  const latCpuUsPerRecord = round((brokerPids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - cpuL0[i], 0) / lat.records) * 1e6, 1);
  loads.afterLatency = load();
  say(
    `latency: ${lat.records} records in ${lat.requests} Produce requests (${round(lat.mbps, 2)} MB/s), ${lat.consumed} fetched` +
      `; Produce acks=all p50 ${round(lat.produceAck.p50, 2)} ms, p99 ${round(lat.produceAck.p99, 2)} ms; broker cpu ${latBrokerCpu.map((c) => `${c}%`).join('/')} = ${latCpuUsPerRecord} µs per record (${latSystemPct}% in the kernel; ${loadText(loads.afterLatency)})`,
  );

  say(`latency by second of the schedule [records, max end-to-end ms, max Produce ack ms]: ${JSON.stringify(lat.timeline)}`);
  if (/SAMSA_TRACE_LATENCY=1/.test(String(o.brokerEnv))) printLatencyTraces(cluster, latStart);
  await cluster.stop();
  return { rounds, lat, latBrokerCpu, latSystemPct, latCpuUsPerRecord, brokerPids, profDir };
}

/** produce-rf3.tls: the SSL cluster's figures beside the plaintext ones of the same run, and the ratios (secure / plaintext). */
function tlsFigure(plain, secure, latencyOnly, report) {
  const med = (r, k) => median(r.rounds.map((x) => x[k]));
  const pl = plain.lat.latency;
  const tl = secure.lat.latency;
  const latency = {
    p50: { tls: round(tl.p50, 2), plaintext: round(pl.p50, 2), ratio: round(tl.p50 / pl.p50, 2) },
    p99: { tls: round(tl.p99, 2), plaintext: round(pl.p99, 2), ratio: round(tl.p99 / pl.p99, 2) },
  };
  const latencyText = `latency p50 ${latency.p50.tls} vs ${latency.p50.plaintext} ms (${latency.p50.ratio}×), p99 ${latency.p99.tls} vs ${latency.p99.plaintext} ms (${latency.p99.ratio}×)`;
  const setup =
    'the same rounds on a second cluster whose listeners are all SSL (client = inter-broker; CONTROLLER with ssl.client.auth=required), the load generator over TLS';
  if (latencyOnly) {
    report.figure({ name: 'produce-rf3.tls', value: tl.p99, digits: 2, unit: 'ms (p99)', latency, setup, line: `produce-rf3.tls: ${latencyText}` });
    return;
  }
  const t = {
    msgsPerSec: Math.round(med(secure, 'msgsPerSec')),
    mbps: round(med(secure, 'mbps')),
    plaintext: { msgsPerSec: Math.round(med(plain, 'msgsPerSec')), mbps: round(med(plain, 'mbps')) },
  };
  const ratio = round(med(secure, 'msgsPerSec') / med(plain, 'msgsPerSec'), 3);
  const mbpsRatio = round(med(secure, 'mbps') / med(plain, 'mbps'), 3);
  report.figure({
    name: 'produce-rf3.tls',
    value: t.msgsPerSec,
    digits: 0,
    unit: 'msgs/s',
    mbps: t.mbps,
    plaintext: t.plaintext,
    ratio,
    mbpsRatio,
    brokerCpuUsPerRecord: { tls: median(secure.rounds.map((x) => x.brokerCpuUsPerRecord)), plaintext: median(plain.rounds.map((x) => x.brokerCpuUsPerRecord)) },
    latency,
    setup,
    runs: secure.rounds.map(roundFigures),
    line:
      `produce-rf3.tls: ${t.msgsPerSec} msgs/s, ${t.mbps} MB/s over TLS vs ${t.plaintext.msgsPerSec} msgs/s, ${t.plaintext.mbps} MB/s plaintext ` +
      `= ${ratio}× msgs/s, ${mbpsRatio}× MB/s; ${latencyText}`,
  });
}

// produce-single: one Samsa broker process (ZooKeeper mode, a 1-partition RF=1 topic), acks=1,
// ~1000 x 1 KiB records per Produce request, 5 requests in flight on one connection, driven by
// bench/lib/producer.mjs. Each round runs the Node I/O floor (floor/run.sh of the reference
// scripts, SAMSA_BENCH_REFERENCE_DIR) once and us once (order alternating), so both see the same
// machine state; the figure is the median of our rounds over the median floor run.
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startSingleBroker } from './lib/cluster.mjs';
import { formatProfile, summarizeProfile } from './lib/cpuprofile.mjs';
import { runFloor } from './lib/floor.mjs';
import { produceLoad, waitUntilProducible } from './lib/producer.mjs';
import { log, median, round } from './lib/report.mjs';
import { REPO_ROOT, referenceScriptDir } from './lib/script.mjs';

export const description = 'one broker process, acks=1, 1 KiB records, 5 x ~1 MB requests in flight, vs the Node I/O floor';

const GiB = 1024 ** 3;

/** CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in USER_HZ (100 on Linux)
  } catch {
    return NaN;
  }
}

export const defaults = {
  rounds: 3,
  /** Data per measured round (and per floor run: frames of 1 MiB). */
  gib: 2,
  /** A round also ends after this long (all in-flight requests are still waited for). */
  seconds: 25,
  inflight: 5,
  warmupMib: 256,
  /** No new round starts when it would likely end past this many seconds (at least one round runs). */
  budget: 130,
  profile: false,
};

export async function run(opts, report) {
  const o = { ...defaults, ...opts };
  referenceScriptDir('floor'); // fail before starting anything when the reference scripts are missing
  const profDir = join(REPO_ROOT, 'bench', 'profiles');
  if (o.profile) {
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir, { recursive: true });
  }
  const cluster = await startSingleBroker({
    nodeFlags: o.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    log,
  });
  const topic = 'bench';
  await cluster.createTopic(topic, 1);
  const target = { host: cluster.host, port: cluster.port, topic, partition: 0 };
  await waitUntilProducible(target);

  log(`warm-up: ${o.warmupMib} MiB`);
  await produceLoad({ ...target, acks: 1, inflight: o.inflight, totalBytes: o.warmupMib * 1024 * 1024 });

  const floorRuns = [];
  const ours = [];
  const t0 = Date.now();
  for (let r = 1; r <= o.rounds; r++) {
    const elapsed = (Date.now() - t0) / 1000;
    if (r > 1 && elapsed + elapsed / (r - 1) > o.budget) {
      log(`stopping after ${r - 1} round(s): another would end past the ${o.budget} s budget (--budget)`);
      break;
    }
    // alternate the order so neither side always runs on the other's leftovers (page cache, writeback)
    const floorRun = async () => (await runFloor({ frames: Math.round((o.gib * GiB) / (1024 * 1024)), runs: 1 }))[0];
    const f = r % 2 === 1 ? await floorRun() : undefined;
    const cpu0 = cpuSeconds(cluster.broker.pid);
    const client0 = process.cpuUsage();
    const res = await produceLoad({ ...target, acks: 1, inflight: o.inflight, totalBytes: o.gib * GiB, maxSeconds: o.seconds });
    const client = process.cpuUsage(client0);
    res.brokerCpuPct = ((cpuSeconds(cluster.broker.pid) - cpu0) / res.seconds) * 100;
    res.clientCpuPct = ((client.user + client.system) / 1e6 / res.seconds) * 100;
    ours.push(res);
    floorRuns.push(f ?? (await floorRun()));
    log(
      `round ${r}/${o.rounds}: floor ${floorRuns.at(-1).mbps} MB/s (broker cpu ${floorRuns.at(-1).cpuPct}%); samsa ${round(res.mbps)} MB/s, ${Math.round(res.recordsPerSec)} records/s ` +
        `(broker cpu ${Math.round(res.brokerCpuPct)}%, load generator cpu ${Math.round(res.clientCpuPct)}%; ${res.requests} requests of ${res.batchSize} B in ${round(res.seconds, 2)} s, Produce v${res.produceVersion})`,
    );
  }
  await cluster.stop();

  const floorMbps = median(floorRuns.map((f) => f.mbps));
  const mbps = median(ours.map((x) => x.mbps));
  const rps = median(ours.map((x) => x.recordsPerSec));
  const ratio = mbps / floorMbps;
  report.figure({
    name: 'floor',
    value: floorMbps,
    unit: 'MB/s',
    text: `median of ${floorRuns.length} runs: ${floorRuns.map((f) => f.mbps).join(', ')}; broker side, 1 MiB frames, crc32c + file append, 5 in flight`,
    runs: floorRuns,
  });
  report.figure({
    name: 'produce-single',
    value: mbps,
    unit: 'MB/s',
    reference: { name: 'floor', value: floorMbps, unit: 'MB/s' },
    ratio,
    text: `${Math.round(ratio * 100)}% of floor ${round(floorMbps)} MB/s; by round: ${ours.map((x, i) => `${Math.round((x.mbps / floorRuns[i].mbps) * 100)}%`).join(', ')}`,
    runs: ours.map((x, i) => ({
      mbps: round(x.mbps),
      recordsPerSec: Math.round(x.recordsPerSec),
      seconds: round(x.seconds, 2),
      requests: x.requests,
      batchBytes: x.batchBytes,
      brokerCpuPct: Math.round(x.brokerCpuPct),
      clientCpuPct: Math.round(x.clientCpuPct),
      ratioToFloorRun: round(x.mbps / floorRuns[i].mbps, 3),
    })),
    profiled: o.profile,
  });
  report.figure({
    name: 'produce-single.records',
    value: rps,
    digits: 0,
    unit: 'records/s',
    text: `${ours[0].batchSize} B batches of 1000 x 1 KiB values, acks=1, ${o.inflight} in flight`,
  });
  // CPU the broker process burns per GB taken in (all threads): less sensitive to a busy machine
  const floorCpu = median(floorRuns.map((f) => (f.cpuPct / 100 / f.mbps) * 1000));
  const ourCpu = median(ours.map((x) => (x.brokerCpuPct / 100 / x.mbps) * 1000));
  report.figure({
    name: 'produce-single.broker-cpu',
    value: ourCpu,
    unit: 'cpu-s/GB',
    digits: 2,
    reference: { name: 'floor broker', value: floorCpu, unit: 'cpu-s/GB' },
    ratio: ourCpu / floorCpu,
    text: `${round(ourCpu / floorCpu, 2)}x the floor broker's ${round(floorCpu, 2)} cpu-s/GB; broker process user+system time per GB appended`,
  });

  if (o.profile) {
    const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
    if (files.length === 0) {
      log(`no .cpuprofile in ${profDir} (did the broker exit cleanly?)`);
    } else {
      // from the first Produce on: start-up left out
      const summary = summarizeProfile(join(profDir, files[0]), 25, { from: 'handlers/produce.js' });
      process.stderr.write(`${formatProfile(summary, `broker CPU profile (${join('bench', 'profiles', files[0])})`)}\n`);
      report.detail('produce-single.profile', { file: join('bench', 'profiles', files[0]), ...summary });
    }
  }
}

// producer-vs-kcat: `samsa producer-perf-test` (our @samsa/client Producer) against `kcat -P`
// (librdkafka) on the same topic in the same run, 1 KiB records, acks=all; one broker and one
// partition by default (--brokers 3 --partitions 3: RF=3, as test-e2e/producer.test.ts).
// Each round runs kcat once and samsa once (order alternating, so neither always runs on the
// other's leftovers); the figure is the median over the rounds of samsa's records/s over kcat's in
// the same round (a paired comparison: this box's speed drifts by ±40% between rounds, which a
// ratio of the two medians, taken from different rounds, would carry; both are printed).
//   kcat:  `kcat -P -b <broker> -t <topic> -X acks=all` reading <records> lines of 1024 bytes + '\n'
//          from a file; records/sec = records / wall-clock time of the process (kcat flushes before exit)
//   samsa: `samsa producer-perf-test --num-records <records> --record-size 1024 --throughput -1
//          --producer-props bootstrap.servers=<broker> acks=all`; records/sec as it reports it
// samsa runs twice per round: with Kafka's producer defaults (batch.size 16384, linger.ms 0, as
// Kafka 3.8) — the figure `producer-vs-kcat` — and with librdkafka's batching defaults, which kcat
// uses (batch.size 1000000, linger.ms 5; --matched-props) — `producer-vs-kcat.matched`. The three
// runs of a round go in rotating order. --profile runs samsa (matched) under --cpu-prof.
import { spawn } from 'node:child_process';
import { createReadStream, mkdirSync, openSync, readdirSync, rmSync, writeSync, closeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAMSA_BIN } from '@samsa/local-cluster';
import { onCleanup } from './lib/cleanup.mjs';
import { startCluster } from './lib/cluster.mjs';
import { formatProfile, summarizeProfile } from './lib/cpuprofile.mjs';
import { log, median, round } from './lib/report.mjs';
import { REPO_ROOT } from './lib/script.mjs';

export const description = 'samsa producer-perf-test vs kcat -P (librdkafka), one broker, 1 KiB records, acks=all';
export const byNameOnly = true;

export const defaults = {
  /** Seven: a single round moves by ±15% with the box; the median of seven is steadier. */
  rounds: 7,
  records: 200_000,
  recordSize: 1024,
  partitions: 1,
  /** Brokers; the topic's replication factor is min(brokers, 3), leaders spread over them. */
  brokers: 1,
  warmupRecords: 20_000,
  /** Extra producer properties for samsa's default-config runs, space-separated. */
  samsaProps: '',
  /** samsa's properties for the runs with kcat's (librdkafka's) batching. */
  matchedProps: 'batch.size=1000000 linger.ms=5',
  profile: false,
};

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

function runProcess(command, args, { stdinFile, timeoutMs = 300_000 } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: [stdinFile ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const stop = onCleanup(`kill ${command}`, () => child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    if (stdinFile) createReadStream(stdinFile).pipe(child.stdin);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      void stop();
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      if (code !== 0) reject(new Error(`${command} exited with ${code ?? signal}: ${err.slice(-2000)}`));
      else resolve({ out, err, seconds });
    });
  });
}

/** A file of `n` lines, each `size` random letters and '\n' (kcat -P's record delimiter). */
function writeRecordsFile(file, n, size) {
  const line = Buffer.alloc(size + 1, 10);
  for (let i = 0; i < size; i++) line[i] = 65 + Math.floor(Math.random() * 26);
  const chunk = Buffer.concat(Array.from({ length: 1000 }, () => line));
  const fd = openSync(file, 'w');
  let left = n;
  while (left > 0) {
    const k = Math.min(1000, left);
    writeSync(fd, chunk, 0, k * (size + 1));
    left -= k;
  }
  closeSync(fd);
}

async function runKcat(bootstrap, topic, file, records) {
  const r = await runProcess('kcat', ['-P', '-b', bootstrap, '-t', topic, '-X', 'acks=all', '-X', 'client.id=bench-kcat'], { stdinFile: file });
  return { recordsPerSec: records / r.seconds, seconds: r.seconds };
}

async function runSamsa(bootstrap, topic, o, nodeFlags = []) {
  const r = await runProcess(process.execPath, [
    ...nodeFlags,
    SAMSA_BIN,
    'producer-perf-test',
    '--topic',
    topic,
    '--num-records',
    String(o.records),
    '--record-size',
    String(o.recordSize),
    '--throughput',
    '-1',
    '--producer-props',
    `bootstrap.servers=${bootstrap}`,
    'acks=all',
    'client.id=bench-samsa',
    ...String(o.samsaProps || '')
      .split(/\s+/)
      .filter(Boolean),
  ]);
  const last = r.out.trim().split('\n').at(-1) ?? '';
  const m = /^(\d+) records sent, ([\d.]+) records\/sec/.exec(last);
  if (!m || Number(m[1]) !== o.records) throw new Error(`unexpected producer-perf-test output: ${last}\n${r.err.slice(-2000)}`);
  return { recordsPerSec: Number(m[2]), seconds: r.seconds, summary: last };
}

export async function run(opts, report) {
  const o = { ...defaults, ...opts };
  const cluster = await startCluster({ brokers: o.brokers, log });
  // (cluster.stop() below; cleanup also stops it on failure)
  const topic = 'bench-kcat';
  const rf = Math.min(o.brokers, 3);
  const assignment = new Map(Array.from({ length: o.partitions }, (_, p) => [p, Array.from({ length: rf }, (_, i) => (p + i) % o.brokers)]));
  await cluster.createTopic(topic, assignment, {}, { fullIsr: true });
  const bootstrap = cluster.ports.map((port) => `${cluster.host}:${port}`).join(',');
  const dir = join(tmpdir(), `samsa-bench-kcat-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  onCleanup('remove kcat input', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'records.txt');
  const warmFile = join(dir, 'warmup.txt');
  writeRecordsFile(file, o.records, o.recordSize);
  writeRecordsFile(warmFile, o.warmupRecords, o.recordSize);

  log(`warm-up: ${o.warmupRecords} records each (load ${load()})`);
  await runKcat(bootstrap, topic, warmFile, o.warmupRecords);
  await runSamsa(bootstrap, topic, { ...o, records: o.warmupRecords });

  const kcat = [];
  const ours = [];
  const matched = [];
  const pct = (a, b) => `${Math.round((a / b) * 100)}%`;
  for (let r = 1; r <= o.rounds; r++) {
    const loadBefore = load();
    const runs = [
      async () => kcat.push(await runKcat(bootstrap, topic, file, o.records)),
      async () => ours.push(await runSamsa(bootstrap, topic, o)),
      async () => matched.push(await runSamsa(bootstrap, topic, { ...o, samsaProps: o.matchedProps })),
    ];
    for (let i = 0; i < runs.length; i++) await runs[(i + r - 1) % runs.length]();
    const k = kcat.at(-1).recordsPerSec;
    log(
      `round ${r}/${o.rounds} (load ${loadBefore}): kcat ${Math.round(k)} records/s (${round(kcat.at(-1).seconds, 2)} s); ` +
        `samsa ${Math.round(ours.at(-1).recordsPerSec)} records/s = ${pct(ours.at(-1).recordsPerSec, k)}; ` +
        `samsa with kcat's batching ${Math.round(matched.at(-1).recordsPerSec)} records/s = ${pct(matched.at(-1).recordsPerSec, k)}`,
    );
  }

  let profile;
  if (o.profile) {
    const profDir = join(REPO_ROOT, 'bench', 'profiles');
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir, { recursive: true });
    await runSamsa(bootstrap, topic, { ...o, samsaProps: o.matchedProps }, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
    const f = readdirSync(profDir).find((x) => x.endsWith('.cpuprofile'));
    if (f) {
      profile = summarizeProfile(join(profDir, f), 25);
      process.stderr.write(`${formatProfile(profile, 'samsa producer-perf-test')}\n`);
    }
  }
  await cluster.stop();

  const kcatRps = median(kcat.map((x) => x.recordsPerSec));
  const loadAfter = load();
  report.figure({
    name: 'producer-vs-kcat.kcat',
    value: kcatRps,
    unit: 'records/s',
    digits: 0,
    text: `kcat -P, median of ${kcat.length}: ${kcat.map((x) => Math.round(x.recordsPerSec)).join(', ')}`,
    runs: kcat.map((x) => ({ recordsPerSec: Math.round(x.recordsPerSec), seconds: round(x.seconds, 2) })),
  });
  for (const [name, list, what] of [
    ['producer-vs-kcat', ours, `Kafka's producer defaults${o.samsaProps ? ` + ${o.samsaProps}` : ''}`],
    ['producer-vs-kcat.matched', matched, o.matchedProps],
  ]) {
    const rps = median(list.map((x) => x.recordsPerSec));
    const perRound = list.map((x, i) => x.recordsPerSec / kcat[i].recordsPerSec);
    const ratio = median(perRound);
    report.figure({
      name,
      value: rps,
      unit: 'records/s',
      digits: 0,
      reference: { name: 'producer-vs-kcat.kcat', value: kcatRps, unit: 'records/s' },
      ratio,
      text: `${Math.round(ratio * 100)}% of kcat (median of the rounds' ratios: ${perRound.map((x) => `${Math.round(x * 100)}%`).join(', ')}) with ${what}; medians ${Math.round(rps)} vs kcat's ${Math.round(kcatRps)} records/s = ${pct(rps, kcatRps)}; ${o.records} x ${o.recordSize} B, acks=all, ${o.brokers} broker(s), ${o.partitions} partition(s) RF=${rf}, load ${loadAfter}`,
      runs: list.map((x) => ({ recordsPerSec: Math.round(x.recordsPerSec), seconds: round(x.seconds, 2), summary: x.summary })),
      ...(name.endsWith('matched') && profile ? { profiled: true, profile } : {}),
    });
  }
}

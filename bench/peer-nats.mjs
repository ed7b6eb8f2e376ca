// peer-nats (only when asked by name): peer-nats/run.sh of the reference scripts
// (SAMSA_BENCH_REFERENCE_DIR) — NATS JetStream, 3 nodes on loopback, file storage, R=3 — for
// comparison with a peer a user might pick. It installs nats-server with apt-get when missing, so
// it is not part of the default run.
import { join } from 'node:path';
import { log } from './lib/report.mjs';
import { runScript, referenceScriptDir } from './lib/script.mjs';

export const description = 'NATS JetStream (3 nodes, R=3, file storage) publish + ordered read (installs nats-server; by name only)';
export const byNameOnly = true;

export const defaults = { msgs: 100000, inflight: 1024, size: 1024, replicas: 3 };

const PUB = /^PUB R=(\d+) inflight=(\d+) size=(\d+): (\d+) msgs (\S+)s (\d+) msg\/s (\S+) MB\/s errs=(\d+)/;
const SUB = /^SUB ordered consumer: (\d+) msgs (\S+)s (\d+) msg\/s (\S+) MB\/s/;

/**
 * Runs peer-nats/run.sh of the reference scripts; returns { publish: { msgsPerSec, mbps, seconds, msgs,
 * replicas, inflight, size, errors }, consume: { msgsPerSec, mbps, seconds, msgs } }.
 */
export async function runNats(opts = {}, { timeoutMs } = {}) {
  const o = { ...defaults, ...opts };
  const dir = referenceScriptDir('peer-nats');
  log(`peer-nats: ${o.msgs} x ${o.size} B, ${o.inflight} in flight, R=${o.replicas}`);
  const lines = await runScript(join(dir, 'run.sh'), [o.msgs, o.inflight, o.size, o.replicas], {
    workDirPrefix: '/tmp/peer-nats.',
    onLine: (l) => log(`peer-nats: ${l}`),
    ...(timeoutMs ? { timeoutMs } : {}),
  });
  const pub = lines.map((l) => PUB.exec(l)).find(Boolean);
  const sub = lines.map((l) => SUB.exec(l)).find(Boolean);
  if (!pub || !sub) throw new Error(`peer-nats: unexpected output:\n${lines.join('\n')}`);
  return {
    publish: {
      replicas: Number(pub[1]),
      inflight: Number(pub[2]),
      size: Number(pub[3]),
      msgs: Number(pub[4]),
      seconds: Number(pub[5]),
      msgsPerSec: Number(pub[6]),
      mbps: Number(pub[7]),
      errors: Number(pub[8]),
    },
    consume: { msgs: Number(sub[1]), seconds: Number(sub[2]), msgsPerSec: Number(sub[3]), mbps: Number(sub[4]) },
  };
}

export async function run(opts, report) {
  const { publish: p, consume: c } = await runNats(opts);
  report.figure({
    name: 'peer-nats.publish',
    value: p.mbps,
    unit: 'MB/s',
    text: `${p.msgsPerSec} msg/s, R=${p.replicas}, ${p.inflight} in flight, ${p.size} B, errors ${p.errors}`,
    msgsPerSec: p.msgsPerSec,
  });
  report.figure({ name: 'peer-nats.consume', value: c.mbps, unit: 'MB/s', text: `${c.msgsPerSec} msg/s, ordered consumer`, msgsPerSec: c.msgsPerSec });
}

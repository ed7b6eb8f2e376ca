// peer-nats (only when asked by name): ../shared/bench/peer-nats/run.sh — NATS JetStream, 3 nodes
// on loopback, file storage, R=3 — for comparison with a peer a user might pick. It installs
// nats-server with apt-get when missing, so it is not part of the default run.
import { join } from 'node:path';
import { log } from './lib/report.mjs';
import { runScript, sharedBench } from './lib/script.mjs';

export const description = 'NATS JetStream (3 nodes, R=3, file storage) publish + ordered read (installs nats-server; by name only)';
export const byNameOnly = true;

export const defaults = { msgs: 100000, inflight: 1024, size: 1024, replicas: 3 };

const PUB = /^PUB R=(\d+) inflight=(\d+) size=(\d+): (\d+) msgs (\S+)s (\d+) msg\/s (\S+) MB\/s errs=(\d+)/;
const SUB = /^SUB ordered consumer: (\d+) msgs (\S+)s (\d+) msg\/s (\S+) MB\/s/;

export async function run(opts, report) {
  const o = { ...defaults, ...opts };
  const dir = sharedBench('peer-nats');
  log(`peer-nats: ${o.msgs} x ${o.size} B, ${o.inflight} in flight, R=${o.replicas}`);
  const lines = await runScript(join(dir, 'run.sh'), [o.msgs, o.inflight, o.size, o.replicas], {
    workDirPrefix: '/tmp/peer-nats.',
    onLine: (l) => log(`peer-nats: ${l}`),
  });
  const pub = lines.map((l) => PUB.exec(l)).find(Boolean);
  const sub = lines.map((l) => SUB.exec(l)).find(Boolean);
  if (!pub || !sub) throw new Error(`peer-nats: unexpected output:\n${lines.join('\n')}`);
  report.figure({ name: 'peer-nats.publish', value: Number(pub[7]), unit: 'MB/s', text: `${pub[6]} msg/s, R=${pub[1]}, ${pub[2]} in flight, ${pub[3]} B, errors ${pub[8]}`, msgsPerSec: Number(pub[6]) });
  report.figure({ name: 'peer-nats.consume', value: Number(sub[4]), unit: 'MB/s', text: `${sub[3]} msg/s, ordered consumer`, msgsPerSec: Number(sub[3]) });
}

#!/usr/bin/env node
// KafkaJS side of `scripts/docker-local.sh smoke`, run on the host against the compose cluster.
//
//   node scripts/docker-smoke.mjs roundtrip  BOOTSTRAP TOPIC N
//     consumes the N records kcat produced to TOPIC (values kcat-0..kcat-N-1), then produces N
//     records (kafkajs-0..) with acks=all for kcat to read back.
//   node scripts/docker-smoke.mjs kill-under-load  BOOTSTRAP TOPIC ACKED_FILE
//     creates TOPIC (3 partitions, RF 3), produces with acks=all from 4 concurrent producers, runs
//     `docker kill` on the leader of partition 0 ($SMOKE_CONTAINERS maps broker ids to containers:
//     "1=name,2=name,3=name"), keeps producing for a while, and writes every acknowledged value to
//     ACKED_FILE (one per line). Prints the killed broker id on stdout.
//
// kafkajs is taken from $KAFKAJS_DIR (a node_modules/kafkajs directory) or normal resolution.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const { Kafka, logLevel } = require(process.env.KAFKAJS_DIR ? join(process.env.KAFKAJS_DIR) : 'kafkajs');

const [mode, bootstrap, topic, arg] = process.argv.slice(2);
if (!mode || !bootstrap || !topic) {
  console.error('usage: docker-smoke.mjs roundtrip|kill-under-load BOOTSTRAP TOPIC (N|ACKED_FILE)');
  process.exit(2);
}
const say = (msg) => process.stderr.write(`[kafkajs] ${msg}\n`);
const kafka = new Kafka({
  clientId: 'samsa-docker-smoke',
  brokers: bootstrap.split(','),
  logLevel: logLevel.NOTHING,
  retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 2000 },
});

async function roundtrip(n) {
  const consumer = kafka.consumer({ groupId: `smoke-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = new Set();
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${seen.size} of ${n} records within 90 s`)), 90_000);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          seen.add(message.value.toString());
          if (seen.size >= n) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  for (let i = 0; i < n; i++) if (!seen.has(`kcat-${i}`)) throw new Error(`record kcat-${i} was not consumed`);
  say(`consumed all ${n} records kcat produced`);
  const producer = kafka.producer();
  await producer.connect();
  for (let i = 0; i < n; i += 100) {
    const messages = Array.from({ length: Math.min(100, n - i) }, (_, j) => ({ value: `kafkajs-${i + j}` }));
    await producer.send({ topic, acks: -1, messages });
  }
  await producer.disconnect();
  say(`produced ${n} records with acks=all`);
}

async function killUnderLoad(ackedFile) {
  const containers = new Map(
    (process.env.SMOKE_CONTAINERS ?? '')
      .split(',')
      .filter(Boolean)
      .map((kv) => kv.split('='))
      .map(([id, name]) => [Number(id), name]),
  );
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }],
    waitForLeaders: true,
  });
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  const victim = meta.topics[0].partitions.find((p) => p.partitionId === 0).leader;
  await admin.disconnect();
  const container = containers.get(victim);
  if (!container) throw new Error(`no container known for broker ${victim} (SMOKE_CONTAINERS=${process.env.SMOKE_CONTAINERS})`);

  const acked = [];
  let failed = 0;
  let stop = false;
  const producers = await Promise.all(
    Array.from({ length: 4 }, async () => {
      const p = kafka.producer({ allowAutoTopicCreation: false });
      await p.connect();
      return p;
    }),
  );
  let next = 0;
  const loops = producers.map(async (p, w) => {
    while (!stop) {
      const values = Array.from({ length: 20 }, () => `w${w}-${next++}`);
      try {
        await p.send({ topic, acks: -1, timeout: 10_000, messages: values.map((value) => ({ value })) });
        acked.push(...values);
      } catch {
        failed += values.length; // not acknowledged: may or may not be in the log
      }
    }
  });
  const waitAcked = async (n, what) => {
    const deadline = Date.now() + 120_000;
    while (acked.length < n) {
      if (Date.now() > deadline) throw new Error(`only ${acked.length} records acknowledged ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await waitAcked(2000, 'before the kill');
  const before = acked.length;
  say(`${before} records acknowledged; docker kill ${container} (broker ${victim}, leader of partition 0)`);
  execFileSync('docker', ['kill', container], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitAcked(before + 3000, 'after the kill');
  stop = true;
  await Promise.all(loops);
  await Promise.all(producers.map((p) => p.disconnect()));
  writeFileSync(ackedFile, acked.join('\n') + '\n');
  say(`${acked.length} records acknowledged (${acked.length - before} after the kill), ${failed} not acknowledged`);
  process.stdout.write(`${victim}\n`);
}

try {
  if (mode === 'roundtrip') await roundtrip(Number(arg ?? 1000));
  else if (mode === 'kill-under-load') await killUnderLoad(arg);
  else throw new Error(`unknown mode ${mode}`);
  process.exit(0);
} catch (err) {
  say(`FAILED: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
}

#!/usr/bin/env node
/**
 * Captures real record batches from real Kafka clients, for golden-bytes tests.
 *
 * Starts a tiny fake broker on 127.0.0.1 that answers just ApiVersions, Metadata and Produce
 * (hand-encoded here on purpose: this script must not depend on the codec under test), then runs
 *   - kcat (librdkafka) once per compression codec, and
 *   - KafkaJS once per codec,
 * and writes the `records` bytes of each Produce request to
 *   packages/protocol/src/records/fixtures/<client>-<codec>.bin
 * plus manifest.json describing what each client was asked to send.
 *
 * Codecs for KafkaJS: gzip is built in. KafkaJS has no snappy/lz4/zstd of its own; its companion
 * packages are not installed here, so this script registers codecs itself:
 *   snappy: exactly what kafkajs-snappy does (raw snappy block via the `snappy` package);
 *   lz4 / zstd: frame encoders from lz4-napi / zstd-napi (flagged in the manifest as such).
 *
 * Usage: node packages/protocol/scripts/capture-records.mjs [--kcat /usr/bin/kcat] [--only kcat|kafkajs]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, '..', 'src', 'records', 'fixtures');
const require = createRequire(import.meta.url);

const args = process.argv.slice(2);
const argValue = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const KCAT = argValue('--kcat', '/usr/bin/kcat');
const ONLY = argValue('--only', null);
const TOPIC = 'samsa-capture';
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const VARIANTS = [...CODECS, 'idempotent-gzip'];

// ------------------------------------------------------------------------------------------------
// Minimal wire helpers (big-endian, Kafka classic encodings)

class W {
  parts = [];
  i8(v) {
    const b = Buffer.alloc(1);
    b.writeInt8(v);
    this.parts.push(b);
    return this;
  }
  i16(v) {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    this.parts.push(b);
    return this;
  }
  i32(v) {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    this.parts.push(b);
    return this;
  }
  i64(v) {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(v));
    this.parts.push(b);
    return this;
  }
  uvarint(v) {
    const out = [];
    while (v >= 0x80) {
      out.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.push(v);
    this.parts.push(Buffer.from(out));
    return this;
  }
  str(s) {
    if (s === null) return this.i16(-1);
    const b = Buffer.from(s, 'utf8');
    this.i16(b.length);
    this.parts.push(b);
    return this;
  }
  bool(v) {
    return this.i8(v ? 1 : 0);
  }
  buf() {
    return Buffer.concat(this.parts);
  }
}

class R {
  constructor(buf) {
    this.b = buf;
    this.p = 0;
  }
  i8() {
    return this.b.readInt8(this.p++);
  }
  i16() {
    const v = this.b.readInt16BE(this.p);
    this.p += 2;
    return v;
  }
  i32() {
    const v = this.b.readInt32BE(this.p);
    this.p += 4;
    return v;
  }
  uvarint() {
    let v = 0,
      s = 0,
      b;
    do {
      b = this.b[this.p++];
      v |= (b & 0x7f) << s;
      s += 7;
    } while (b & 0x80);
    return v >>> 0;
  }
  str() {
    const n = this.i16();
    if (n < 0) return null;
    const s = this.b.toString('utf8', this.p, this.p + n);
    this.p += n;
    return s;
  }
  bytes() {
    const n = this.i32();
    if (n < 0) return null;
    const s = this.b.subarray(this.p, this.p + n);
    this.p += n;
    return s;
  }
}

// ------------------------------------------------------------------------------------------------
// The fake broker

const API = { PRODUCE: 0, FETCH: 1, METADATA: 3, FIND_COORDINATOR: 10, API_VERSIONS: 18, INIT_PRODUCER_ID: 22 };
/** What the fake broker hands out to idempotent producers. */
const PRODUCER_ID = 4242n;
const PRODUCER_EPOCH = 3;
const ADVERTISED = [
  [API.PRODUCE, 0, 7], // v7: zstd allowed; v9+ would be flexible
  [API.FETCH, 0, 11], // never called; librdkafka needs Fetch >= 4 (MsgVer2) and >= 10 (zstd)
  [API.METADATA, 0, 4],
  [API.FIND_COORDINATOR, 0, 2], // never called; librdkafka infers LZ4 support from it
  [API.API_VERSIONS, 0, 3],
  [API.INIT_PRODUCER_ID, 0, 1], // v2+ would be flexible
];

function startBroker(onProduce) {
  const log = [];
  const server = net.createServer((sock) => {
    let pending = Buffer.alloc(0);
    sock.on('error', () => {});
    sock.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        const frame = pending.subarray(4, 4 + size);
        pending = pending.subarray(4 + size);
        const res = handle(frame);
        if (res) {
          const len = Buffer.alloc(4);
          len.writeInt32BE(res.length);
          sock.write(Buffer.concat([len, res]));
        }
      }
    });
  });

  function handle(frame) {
    const r = new R(frame);
    const apiKey = r.i16();
    const apiVersion = r.i16();
    const correlationId = r.i32();
    const clientId = r.str();
    log.push({ apiKey, apiVersion, clientId });
    const head = new W().i32(correlationId); // response header v0 (ApiVersions always uses v0)
    const port = server.address().port;
    switch (apiKey) {
      case API.API_VERSIONS: {
        if (apiVersion >= 3) {
          const w = head.i16(0).uvarint(ADVERTISED.length + 1);
          for (const [k, min, max] of ADVERTISED) w.i16(k).i16(min).i16(max).uvarint(0);
          return w.i32(0).uvarint(0).buf();
        }
        const w = head.i16(0).i32(ADVERTISED.length);
        for (const [k, min, max] of ADVERTISED) w.i16(k).i16(min).i16(max);
        if (apiVersion >= 1) w.i32(0);
        return w.buf();
      }
      case API.METADATA: {
        const n = r.i32();
        const topics = [];
        for (let i = 0; i < n; i++) topics.push(r.str());
        const names = n <= 0 ? [TOPIC] : topics;
        const w = head;
        if (apiVersion >= 3) w.i32(0);
        w.i32(1).i32(1).str('127.0.0.1').i32(port);
        if (apiVersion >= 1) w.str(null);
        if (apiVersion >= 2) w.str('samsa-capture-cluster');
        if (apiVersion >= 1) w.i32(1);
        w.i32(names.length);
        for (const name of names) {
          w.i16(0).str(name);
          if (apiVersion >= 1) w.bool(false);
          w.i32(1).i16(0).i32(0).i32(1).i32(1).i32(1).i32(1).i32(1);
        }
        return w.buf();
      }
      case API.PRODUCE: {
        const transactionalId = apiVersion >= 3 ? r.str() : null;
        const acks = r.i16();
        r.i32();
        const out = [];
        const nt = r.i32();
        for (let t = 0; t < nt; t++) {
          const name = r.str();
          const parts = [];
          const np = r.i32();
          for (let p = 0; p < np; p++) {
            const index = r.i32();
            const records = r.bytes();
            onProduce({ apiVersion, transactionalId, acks, topic: name, partition: index, records: Buffer.from(records ?? []) });
            parts.push(index);
          }
          out.push([name, parts]);
        }
        if (acks === 0) return null;
        const w = head.i32(out.length);
        for (const [name, parts] of out) {
          w.str(name).i32(parts.length);
          for (const index of parts) {
            w.i32(index).i16(0).i64(0);
            if (apiVersion >= 2) w.i64(-1);
            if (apiVersion >= 5) w.i64(0);
          }
        }
        if (apiVersion >= 1) w.i32(0);
        return w.buf();
      }
      case API.INIT_PRODUCER_ID:
        return head.i32(0).i16(0).i64(PRODUCER_ID).i16(PRODUCER_EPOCH).buf();
      default:
        console.error(`fake broker: unexpected api ${apiKey} v${apiVersion}; closing`);
        return null;
    }
  }

  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, log }));
  });
}

// ------------------------------------------------------------------------------------------------
// What the clients are asked to send

const longValue = (i) => `value-${i} `.padEnd(120, `${'abcdefgh'[i % 8]}`);

/** kcat: keys via -K ':'; an empty value with -Z becomes null; headers apply to every message. */
function kcatMessages() {
  const msgs = [];
  for (let i = 0; i < 8; i++) msgs.push({ key: `key-${i}`, value: longValue(i) });
  msgs.push({ key: 'null-value', value: null });
  msgs.push({ key: 'last', value: 'tail ✓ ünïcödé' });
  return msgs;
}
const KCAT_HEADERS = [
  { key: 'source', value: 'kcat' },
  { key: 'trace', value: 'abc-123' },
];

function kafkajsMessages(t0) {
  const msgs = [];
  for (let i = 0; i < 8; i++) {
    msgs.push({ key: `key-${i}`, value: longValue(i), timestamp: t0 + i * 10, headers: i % 3 === 0 ? [{ key: 'idx', value: String(i) }] : [] });
  }
  msgs.push({ key: null, value: 'keyless', timestamp: t0 + 100, headers: [] });
  msgs.push({
    key: 'null-value',
    value: null,
    timestamp: t0 + 50,
    headers: [
      { key: 'multi', value: 'a' },
      { key: 'multi', value: 'b' },
    ],
  });
  return msgs;
}

// ------------------------------------------------------------------------------------------------

async function captureKcat(port, variant, captured) {
  const idempotent = variant.startsWith('idempotent-');
  const codec = idempotent ? variant.slice('idempotent-'.length) : variant;
  const msgs = kcatMessages();
  const input = msgs.map((m) => `${m.key}:${m.value ?? ''}`).join('\n') + '\n';
  const before = captured.length;
  const argv = [
    '-P',
    '-b',
    `127.0.0.1:${port}`,
    '-t',
    TOPIC,
    '-p',
    '0',
    '-K',
    ':',
    '-Z',
    '-X',
    'linger.ms=200',
    '-X',
    'batch.num.messages=1000',
    '-X',
    `compression.codec=${codec}`,
    ...KCAT_HEADERS.flatMap((h) => ['-H', `${h.key}=${h.value}`]),
    ...(idempotent ? ['-X', 'enable.idempotence=true'] : []),
  ];
  const child = spawn(KCAT, argv, { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(input);
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`kcat exited with ${code}: ${stderr}`);
  const got = captured.slice(before);
  if (got.length !== 1) throw new Error(`kcat/${variant}: expected 1 produce partition payload, got ${got.length}`);
  return { expected: msgs.map((m) => ({ ...m, headers: KCAT_HEADERS })), capture: got[0], timestamps: 'producer clock' };
}

async function captureKafkajs(port, variant, captured) {
  const idempotent = variant.startsWith('idempotent-');
  const codec = idempotent ? variant.slice('idempotent-'.length) : variant;
  const { Kafka, CompressionTypes, CompressionCodecs, logLevel, Partitioners } = require('kafkajs');
  const codecNote = {
    none: 'no compression',
    gzip: 'KafkaJS built-in gzip (zlib)',
    snappy: 'codec registered by this script, identical to kafkajs-snappy: raw snappy block via the snappy package',
    lz4: 'codec registered by this script: LZ4 frame via lz4-napi (KafkaJS itself has no lz4)',
    zstd: 'codec registered by this script: zstd frame via zstd-napi (KafkaJS itself has no zstd)',
  }[codec];
  if (codec === 'snappy') {
    const snappy = require('snappy');
    CompressionCodecs[CompressionTypes.Snappy] = () => ({
      compress: async (encoder) => snappy.compress(encoder.buffer),
      decompress: async (buffer) => snappy.uncompress(buffer),
    });
  } else if (codec === 'lz4') {
    const lz4 = require('lz4-napi');
    CompressionCodecs[CompressionTypes.LZ4] = () => ({
      compress: async (encoder) => lz4.compressFrameSync(encoder.buffer),
      decompress: async (buffer) => lz4.decompressFrameSync(buffer),
    });
  } else if (codec === 'zstd') {
    const zstd = require('zstd-napi');
    CompressionCodecs[CompressionTypes.ZSTD] = () => ({
      compress: async (encoder) => zstd.compress(encoder.buffer),
      decompress: async (buffer) => zstd.decompress(buffer),
    });
  }
  const type = {
    none: CompressionTypes.None,
    gzip: CompressionTypes.GZIP,
    snappy: CompressionTypes.Snappy,
    lz4: CompressionTypes.LZ4,
    zstd: CompressionTypes.ZSTD,
  }[codec];
  const kafka = new Kafka({ clientId: 'samsa-capture', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: idempotent ? 1 : 0 } });
  const producer = kafka.producer({
    createPartitioner: Partitioners.LegacyPartitioner,
    allowAutoTopicCreation: false,
    ...(idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {}),
  });
  const t0 = 1_700_000_000_000;
  const msgs = kafkajsMessages(t0);
  const before = captured.length;
  await producer.connect();
  await producer.send({
    topic: TOPIC,
    compression: type,
    acks: idempotent ? -1 : 1,
    messages: msgs.map((m) => ({
      partition: 0,
      key: m.key,
      value: m.value,
      timestamp: String(m.timestamp),
      headers: Object.fromEntries(
        Object.entries(m.headers.reduce((acc, h) => ((acc[h.key] ??= []).push(h.value), acc), {})).map(([k, vs]) => [k, vs.length === 1 ? vs[0] : vs]),
      ),
    })),
  });
  await producer.disconnect();
  const got = captured.slice(before);
  if (got.length !== 1) throw new Error(`kafkajs/${variant}: expected 1 produce partition payload, got ${got.length}`);
  return { expected: msgs, capture: got[0], timestamps: 'explicit', codecNote };
}

async function main() {
  mkdirSync(outDir, { recursive: true });
  const captured = [];
  const { server, port, log } = await startBroker((p) => captured.push(p));
  const manifest = [];
  const kafkajsVersion = require('kafkajs/package.json').version;
  const clients = [
    [
      'kcat',
      captureKcat,
      async () => {
        const out = await new Promise((resolve) => {
          const c = spawn(KCAT, ['-V'], { stdio: ['ignore', 'pipe', 'pipe'] });
          let s = '';
          c.stdout.on('data', (d) => (s += d));
          c.stderr.on('data', (d) => (s += d));
          c.on('close', () => resolve(s));
        });
        const kcatV = (out.match(/Version ([^\s]+)/) ?? [])[1] ?? 'unknown';
        const rdV = (out.match(/librdkafka ([0-9][^\s]*)/) ?? [])[1] ?? 'unknown';
        return `kcat ${kcatV}, librdkafka ${rdV}`;
      },
    ],
    ['kafkajs', captureKafkajs, async () => kafkajsVersion],
  ];
  const failures = [];
  for (const [client, fn, version] of clients) {
    if (ONLY && ONLY !== client) continue;
    const clientVersion = await version();
    for (const variant of VARIANTS) {
      const codec = variant.replace('idempotent-', '');
      try {
        const { expected, capture, timestamps, codecNote } = await fn(port, variant, captured);
        const file = `${client}-${variant}.bin`;
        writeFileSync(join(outDir, file), capture.records);
        manifest.push({
          file,
          client,
          clientVersion: client === 'kcat' ? clientVersion : `kafkajs ${clientVersion}`,
          codec,
          idempotent: variant.startsWith('idempotent-'),
          codecNote: codecNote ?? `librdkafka built-in ${codec}`,
          produceVersion: capture.apiVersion,
          acks: capture.acks,
          topic: capture.topic,
          partition: capture.partition,
          timestamps,
          expected: expected.map((m) => ({
            key: m.key,
            value: m.value,
            ...(m.timestamp !== undefined ? { timestamp: m.timestamp } : {}),
            headers: m.headers,
          })),
        });
        console.log(`captured ${file}: ${capture.records.length} bytes (produce v${capture.apiVersion})`);
      } catch (e) {
        failures.push(`${client}/${variant}: ${e.message}`);
        console.error(`FAILED ${client}/${variant}: ${e.message}`);
      }
    }
  }
  server.close();
  const old = (() => {
    try {
      return JSON.parse(require('node:fs').readFileSync(join(outDir, 'manifest.json'), 'utf8'));
    } catch {
      return [];
    }
  })();
  const merged = [...old.filter((o) => !manifest.some((m) => m.file === o.file)), ...manifest].sort((a, b) => a.file.localeCompare(b.file));
  writeFileSync(join(outDir, 'manifest.json'), JSON.stringify(merged, null, 2) + '\n');
  const apis = [...new Set(log.map((l) => `${l.clientId}:${l.apiKey}v${l.apiVersion}`))];
  console.log(`requests seen: ${apis.join(', ')}`);
  if (failures.length) {
    console.error(`${failures.length} capture(s) failed`);
    process.exitCode = 1;
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

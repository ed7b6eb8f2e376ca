// codec: @samsa/protocol's hot paths over 1 MiB, each beside a plain Buffer.copy of 1 MiB (memory
// bandwidth) measured in the same process: Produce request encode and decode, CRC32C, and
// broker-side validation of a record batch. MB = 10^6 bytes.
import { crc32c } from '@node-rs/crc32';
import { decodeRequest, validateRecords } from '@samsa/protocol';
import { makeBatch, produceRequest } from './lib/producer.mjs';
import { log, round } from './lib/report.mjs';

export const description = 'Produce request encode/decode, CRC32C and record-batch validation over 1 MiB, vs Buffer.copy';

const MiB = 1024 * 1024;

export const defaults = { ms: 700 };

/** Runs `fn` for about `ms` after a warm-up; returns MB/s over `bytesPerOp`. */
function measure(bytesPerOp, fn, ms) {
  for (let i = 0; i < 10; i++) fn();
  let ops = 0;
  const t0 = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 4; i++) fn();
    ops += 4;
    elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  return { mbps: (bytesPerOp * ops) / 1e6 / (elapsed / 1000), ops, msPerOp: elapsed / ops };
}

export async function run(opts, report) {
  const { ms } = { ...defaults, ...opts };
  const src = Buffer.alloc(MiB);
  for (let i = 0; i < src.length; i++) src[i] = (i * 2654435761) >>> 24;
  const dst = Buffer.alloc(MiB);

  // ~1 MiB batch: 1000 records of 1024 random bytes (1,033,xxx bytes)
  const batch = makeBatch(1000, 1024);
  const body = { topic: 'bench', partition: 0, acks: 1, timeoutMs: 30_000, records: batch };
  const frame = produceRequest(9, body);
  const payload = frame.subarray(4);
  let sink = 0;

  log(`codec: ${ms} ms per figure, batch ${batch.length} B, Produce v9 frame ${frame.length} B`);
  const copy = measure(MiB, () => src.copy(dst), ms);
  const figures = [
    ['codec.produce-encode', frame.length, () => (sink += produceRequest(9, body).length), 'encodeRequest Produce v9 with a 1 MiB batch'],
    [
      'codec.produce-decode',
      payload.length,
      () => {
        const d = decodeRequest(payload);
        if (!d.ok) throw new Error(d.error);
        sink += d.body.topicData.length;
      },
      'decodeRequest, records stay a view of the frame',
    ],
    ['codec.crc32c', MiB, () => (sink += crc32c(src) & 1), '@node-rs/crc32 crc32c of 1 MiB'],
    [
      'codec.validate-records',
      batch.length,
      () => {
        const r = validateRecords(batch, { produceVersion: 9 });
        if (!r.ok) throw new Error(r.message);
        sink += r.ok ? 1 : 0;
      },
      'validateRecords of a 1000 x 1 KiB uncompressed batch',
    ],
  ];
  report.figure({ name: 'codec.buffer-copy', value: copy.mbps, unit: 'MB/s', text: 'baseline: Buffer.copy of 1 MiB', msPerOp: round(copy.msPerOp, 4) });
  for (const [name, bytes, fn, what] of figures) {
    const m = measure(bytes, fn, ms);
    const ratio = m.mbps / copy.mbps;
    report.figure({
      name,
      value: m.mbps,
      unit: 'MB/s',
      reference: { name: 'Buffer.copy 1 MiB', value: copy.mbps, unit: 'MB/s' },
      ratio,
      text: `${round(ratio, 3)}x Buffer.copy ${round(copy.mbps)} MB/s; ${what}; ${round(m.msPerOp, 3)} ms/op`,
      msPerOp: round(m.msPerOp, 4),
    });
  }
  if (sink === -1) log('unreachable');
}

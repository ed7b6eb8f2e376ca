#!/usr/bin/env node
/**
 * Micro-benchmark for the records hot path. Runs against the built package:
 *
 *   npx tsc -b packages/protocol && node packages/protocol/bench/records.bench.mjs
 *
 * Prints CRC32C throughput over 1 MiB and decode+validate throughput for ~1 MiB produce batches.
 */
import { CompressionType, RecordBatch, crc32c, encodeRecordBatch, validateRecords } from '../dist/index.js';

const MiB = 1024 * 1024;
const MIN_MS = Number(process.env.BENCH_MS ?? 1000);

function bench(name, bytesPerOp, fn) {
  for (let i = 0; i < 5; i++) fn(); // warm-up
  let ops = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < MIN_MS) {
    fn();
    ops++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const mbps = (bytesPerOp * ops) / MiB / (elapsed / 1000);
  console.log(`${name.padEnd(58)} ${mbps.toFixed(1).padStart(9)} MB/s  (${ops} ops, ${(elapsed / ops).toFixed(3)} ms/op)`);
}

/** A produce batch of about 1 MiB made of records with `valueSize`-byte values. */
function batchOf(valueSize, compression = CompressionType.NONE) {
  const now = Date.now();
  const records = [];
  let size = 61;
  for (let i = 0; size < MiB; i++) {
    const value = Buffer.alloc(valueSize, 97 + (i % 26));
    records.push({ key: `key-${i}`, value, timestamp: now + i, headers: i % 10 === 0 ? [{ key: 'h', value: 'v' }] : [] });
    size += valueSize + 20;
  }
  return { buf: encodeRecordBatch({ records, compression }), count: records.length, uncompressed: size };
}

const oneMiB = Buffer.alloc(MiB);
for (let i = 0; i < oneMiB.length; i++) oneMiB[i] = (i * 2654435761) >>> 24;

console.log(`node ${process.version}, ${process.arch}`);
bench('crc32c 1 MiB', MiB, () => crc32c(oneMiB));

for (const valueSize of [100, 1000]) {
  const { buf, count } = batchOf(valueSize);
  const label = `${(buf.length / MiB).toFixed(2)} MiB, ${count} records of ${valueSize} B`;
  bench(`validateRecords uncompressed (${label})`, buf.length, () => {
    const r = validateRecords(buf, { produceVersion: 9 });
    if (!r.ok) throw new Error(r.message);
  });
  bench(`validate + decode every record (${label})`, buf.length, () => {
    const r = validateRecords(buf, { produceVersion: 9 });
    if (!r.ok) throw new Error(r.message);
    let n = 0;
    for (const rec of new RecordBatch(buf).records()) n += rec.value.length;
    if (n === 0) throw new Error('no data');
  });
}

for (const [name, type] of [
  ['gzip', 1],
  ['snappy', 2],
  ['lz4', 3],
  ['zstd', 4],
]) {
  const { buf, uncompressed } = batchOf(100, type);
  bench(`validateRecords ${name} (throughput over ${(uncompressed / MiB).toFixed(2)} MiB uncompressed)`, uncompressed, () => {
    const r = validateRecords(buf, { produceVersion: 9 });
    if (!r.ok) throw new Error(r.message);
  });
}

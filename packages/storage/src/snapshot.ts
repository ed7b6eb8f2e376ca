/**
 * Producer state snapshot files, `<offset 20 digits>.snapshot` in the partition directory, in
 * Kafka's format (PidSnapshot version 1, the format of Kafka 0.11 through 3.x):
 *
 *   version int16 (1) | crc uint32 (CRC-32C of everything after it) | entries int32 count, then per
 *   producer: producerId int64 | epoch int16 | lastSequence int32 | lastOffset int64 |
 *   offsetDelta int32 | timestamp int64 | coordinatorEpoch int32 | currentTxnFirstOffset int64
 *
 * As in Kafka, a snapshot keeps only the last batch of each producer; the offset in the file name is
 * the log offset the state covers (exclusive).
 */
import { open, readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from '@samsa/protocol';
import { filenamePrefixFromOffset, offsetFromFileName } from './config.js';

export const PRODUCER_SNAPSHOT_FILE_SUFFIX = '.snapshot';
export const PRODUCER_SNAPSHOT_VERSION = 1;

const CRC_OFFSET = 2;
const ENTRIES_OFFSET = CRC_OFFSET + 4;
const ENTRY_SIZE = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

export interface SnapshotEntry {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  /** -1 when the producer has no data batch (only transaction markers, which Samsa does not write). */
  lastOffset: bigint;
  offsetDelta: number;
  timestamp: number;
  coordinatorEpoch: number;
  currentTxnFirstOffset: bigint;
}

export class CorruptSnapshotError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CorruptSnapshotError';
  }
}

export function snapshotFilePath(dir: string, offset: bigint): string {
  return join(dir, `${filenamePrefixFromOffset(offset)}${PRODUCER_SNAPSHOT_FILE_SUFFIX}`);
}

export function encodeSnapshot(entries: Iterable<SnapshotEntry>): Buffer {
  const list = [...entries];
  const buf = Buffer.alloc(ENTRIES_OFFSET + 4 + list.length * ENTRY_SIZE);
  buf.writeInt16BE(PRODUCER_SNAPSHOT_VERSION, 0);
  buf.writeInt32BE(list.length, ENTRIES_OFFSET);
  let pos = ENTRIES_OFFSET + 4;
  for (const e of list) {
    buf.writeBigInt64BE(e.producerId, pos);
    buf.writeInt16BE(e.producerEpoch, pos + 8);
    buf.writeInt32BE(e.lastSequence, pos + 10);
    buf.writeBigInt64BE(e.lastOffset, pos + 14);
    buf.writeInt32BE(e.offsetDelta, pos + 22);
    buf.writeBigInt64BE(BigInt(e.timestamp), pos + 26);
    buf.writeInt32BE(e.coordinatorEpoch, pos + 34);
    buf.writeBigInt64BE(e.currentTxnFirstOffset, pos + 38);
    pos += ENTRY_SIZE;
  }
  buf.writeUInt32BE(crc32c(buf.subarray(ENTRIES_OFFSET)), CRC_OFFSET);
  return buf;
}

/** Decodes a snapshot file's bytes; CorruptSnapshotError on a bad version, CRC or length. */
export function decodeSnapshot(buf: Buffer): SnapshotEntry[] {
  if (buf.length < ENTRIES_OFFSET + 4) throw new CorruptSnapshotError(`Snapshot of ${buf.length} bytes is too short`);
  const version = buf.readInt16BE(0);
  if (version !== PRODUCER_SNAPSHOT_VERSION) throw new CorruptSnapshotError(`Snapshot contained an unknown file version ${version}`);
  const stored = buf.readUInt32BE(CRC_OFFSET);
  const computed = crc32c(buf.subarray(ENTRIES_OFFSET));
  if (stored !== computed) throw new CorruptSnapshotError(`Snapshot is corrupt (CRC is no longer valid). Stored crc: ${stored}. Computed crc: ${computed}`);
  const count = buf.readInt32BE(ENTRIES_OFFSET);
  if (count < 0 || buf.length !== ENTRIES_OFFSET + 4 + count * ENTRY_SIZE) {
    throw new CorruptSnapshotError(`Snapshot declares ${count} entries but holds ${buf.length} bytes`);
  }
  const out: SnapshotEntry[] = [];
  for (let i = 0, pos = ENTRIES_OFFSET + 4; i < count; i++, pos += ENTRY_SIZE) {
    out.push({
      producerId: buf.readBigInt64BE(pos),
      producerEpoch: buf.readInt16BE(pos + 8),
      lastSequence: buf.readInt32BE(pos + 10),
      lastOffset: buf.readBigInt64BE(pos + 14),
      offsetDelta: buf.readInt32BE(pos + 22),
      timestamp: Number(buf.readBigInt64BE(pos + 26)),
      coordinatorEpoch: buf.readInt32BE(pos + 34),
      currentTxnFirstOffset: buf.readBigInt64BE(pos + 38),
    });
  }
  return out;
}

/** Writes and fsyncs `<dir>/<offset>.snapshot` (replacing a file of the same name). */
export async function writeSnapshotFile(dir: string, offset: bigint, entries: Iterable<SnapshotEntry>): Promise<string> {
  const path = snapshotFilePath(dir, offset);
  const data = encodeSnapshot(entries);
  const fh = await open(path, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return path;
}

export async function readSnapshotFile(dir: string, offset: bigint): Promise<SnapshotEntry[]> {
  return decodeSnapshot(await readFile(snapshotFilePath(dir, offset)));
}

/** Offsets of the snapshot files in `dir`, ascending. */
export async function listSnapshotOffsets(dir: string): Promise<bigint[]> {
  const out: bigint[] = [];
  for (const ent of await readdir(dir, { withFileTypes: true })) {
    if (!ent.isFile() || !ent.name.endsWith(PRODUCER_SNAPSHOT_FILE_SUFFIX)) continue;
    const off = offsetFromFileName(ent.name);
    if (off !== null) out.push(off);
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export async function deleteSnapshotFile(dir: string, offset: bigint): Promise<void> {
  await unlink(snapshotFilePath(dir, offset)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

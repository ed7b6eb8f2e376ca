/**
 * Reading a partition's log straight from its segment files (`<log.dir>/<topic>-<partition>/
 * <20-digit base offset>.log`): the replica-divergence check compares what each replica holds on
 * disk, and `samsa dump-log` prints it. A segment is a sequence of RecordBatch v2 frames; an
 * incomplete trailing batch (a write in progress) ends the read without error.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { recordBatches, topicPartitionKey, type RecordBatch } from '@samsa/protocol';

export interface LogFileBatch {
  /** Byte position in the segment file. */
  position: number;
  batch: RecordBatch;
}

/** Every batch of one segment file, in file order. */
export async function readSegmentFile(path: string): Promise<{ batches: LogFileBatch[]; partialAt: number | null }> {
  const buf = await readFile(path);
  const it = recordBatches(buf);
  const batches: LogFileBatch[] = [];
  for (;;) {
    const position = it.position;
    const r = it.next();
    if (r.done) break;
    batches.push({ position, batch: r.value });
  }
  return { batches, partialAt: it.partial ? it.partial.position : null };
}

/** The `.log` segment files of `<logDir>/<topic>-<partition>`, by base offset. */
export async function segmentFiles(logDir: string, topic: string, partition: number): Promise<string[]> {
  const dir = join(logDir, topicPartitionKey(topic, partition));
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort()
    .map((n) => join(dir, n));
}

/** One record as the divergence check compares it. */
export interface LogRecordDigest {
  offset: number;
  /** Leader epoch of its batch. */
  epoch: number;
  key: string | null;
  value: string | null;
}

/** The records of a replica's log below `upTo` (exclusive), from all its segments. */
export async function readReplicaLog(
  logDir: string,
  topic: string,
  partition: number,
  upTo = Number.MAX_SAFE_INTEGER,
): Promise<{ records: LogRecordDigest[]; endOffset: number }> {
  const records: LogRecordDigest[] = [];
  let endOffset = 0;
  for (const file of await segmentFiles(logDir, topic, partition)) {
    const { batches } = await readSegmentFile(file);
    for (const { batch } of batches) {
      endOffset = Math.max(endOffset, Number(batch.nextOffset));
      if (Number(batch.baseOffset) >= upTo) continue;
      if (batch.isControl) continue;
      const epoch = batch.partitionLeaderEpoch;
      for (const r of batch.records()) {
        const off = Number(r.offset);
        if (off >= upTo) break;
        records.push({ offset: off, epoch, key: r.key === null ? null : r.key.toString('utf8'), value: r.value === null ? null : r.value.toString('utf8') });
      }
    }
  }
  return { records, endOffset };
}

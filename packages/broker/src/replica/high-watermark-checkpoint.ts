import { dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { OffsetCheckpointFile } from '@samsa/storage';
import type { Partition } from './partition.js';

const REPLICATION_OFFSET_CHECKPOINT = 'replication-offset-checkpoint';

/** Reads every log dir's replication-offset-checkpoint (Kafka restores high watermarks from it); keys `topic-partition`. */
export async function readHighWatermarks(logDirs: readonly string[], log: Logger): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  for (const dir of logDirs) {
    try {
      for (const [k, hw] of await new OffsetCheckpointFile(join(dir, REPLICATION_OFFSET_CHECKPOINT)).read()) out.set(k, hw);
    } catch (err) {
      log.warn({ err, dir }, 'unreadable replication-offset-checkpoint; high watermarks start at the log start');
    }
  }
  return out;
}

/** Writes each log dir's high watermarks, of the partitions whose logs it holds (atomically, Kafka's checkpoint format). */
export async function writeHighWatermarks(logDirs: readonly string[], partitions: Iterable<Partition>): Promise<void> {
  const byDir = new Map<string, Array<{ topic: string; partition: number; offset: bigint }>>();
  for (const d of logDirs) byDir.set(resolve(d), []);
  for (const p of partitions) {
    const log = p.log;
    if (!log) continue;
    const dir = resolve(dirname(log.dir));
    const list = byDir.get(dir) ?? [];
    list.push({ topic: p.topic, partition: p.partition, offset: log.highWatermark });
    byDir.set(dir, list);
  }
  for (const [dir, entries] of byDir) await new OffsetCheckpointFile(join(dir, REPLICATION_OFFSET_CHECKPOINT)).write(entries);
}

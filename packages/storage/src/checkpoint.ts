/**
 * Kafka's checkpoint file format and atomic file replacement.
 *
 *   <version>\n<count>\n<entry>\n...        e.g. recovery-point-offset-checkpoint:
 *   0                                            0
 *   2                                            2
 *   orders 0 1234                                orders 0 1234
 *   orders 1 99                                  orders 1 99
 *
 * Writes go to `<file>.<pid>.<counter>.tmp`, are fsynced, renamed over the file and the directory is fsynced, so a
 * crash leaves either the old or the new content (Kafka's CheckpointFile).
 */
import { topicPartitionKey, type TopicPartition } from '@samsa/protocol';
import { closeSync, fsync, openSync } from 'node:fs';
import { open, rename, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CorruptCheckpointError } from './errors.js';

/**
 * fsync a directory so a rename in it is durable (no-op where directories cannot be fsynced). Opening
 * and closing a directory read-only change nothing on disk and return at once, so they run on the
 * calling thread; only the fsync, which waits for the disk, goes to the thread pool (one trip per
 * directory instead of three: a broker creating 10,000 partitions fsyncs 10,000 partition directories).
 */
export async function fsyncDirectory(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    const opened = fd;
    await new Promise<void>((resolve, reject) => fsync(opened, (err) => (err ? reject(err) : resolve())));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM') throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

let tempCounter = 0;

/** A temp file name for replacing `path` no other write uses: `<path>.<pid>.<counter>.tmp` (deleted at startup if left). */
export function tempFileName(path: string): string {
  return `${path}.${process.pid}.${++tempCounter}.tmp`;
}

/** The last write queued per file (resolved path); an entry is removed when its write is the last and finishes. */
const writesInFlight = new Map<string, Promise<void>>();

/**
 * When a replaced file is fsynced: `now` (default) before the rename, and the directory after it;
 * `deferred` in the background once the rename is done (Kafka 3.x moved the partition.metadata and
 * leader-epoch checkpoint flushes off the request path, KAFKA-13092 / KAFKA-15046): the write
 * survives a process crash at once (the page cache), a machine crash once the flush ran, a few
 * milliseconds later. For files rebuilt by recovery or rewritten on the next LeaderAndIsr.
 */
export type Fsync = 'now' | 'deferred';

/**
 * Replaces `path` with `data` atomically: write a temp file, fsync it, rename it over `path`, fsync
 * the directory (with `fsync: 'deferred'` both fsyncs run after the promise resolved). Writes of one
 * file run one at a time in call order, whichever object issues them (two LeaderAndIsr for one new
 * partition both write its partition.metadata), and each uses its own temp name, so no write can
 * rename away another's temp file.
 */
export function writeFileAtomically(path: string, data: string | Buffer, fsync: Fsync = 'now'): Promise<void> {
  const key = resolve(path);
  const previous = writesInFlight.get(key) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => replaceFile(path, data, fsync));
  writesInFlight.set(key, next);
  const forget = (): void => {
    if (writesInFlight.get(key) === next) writesInFlight.delete(key);
  };
  next.then(forget, forget);
  return next;
}

async function replaceFile(path: string, data: string | Buffer, fsync: Fsync): Promise<void> {
  const tmp = tempFileName(path);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx');
    await fh.writeFile(data);
    if (fsync === 'now') {
      await fh.sync();
      await fh.close();
      fh = undefined;
    }
    await rename(tmp, path);
  } catch (err) {
    await fh?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  if (fh) void flushInBackground(fh, path);
  else await fsyncDirectory(dirname(path));
}

/** Deferred flushes not yet done (tests wait for them with `deferredFlushes()`). */
const backgroundFlushes = new Set<Promise<void>>();

/** fsync (through the handle that wrote it, renamed since) of a replaced file, then of its directory, off the caller's path. */
function flushInBackground(fh: FileHandle, path: string): Promise<void> {
  const run = async (): Promise<void> => {
    try {
      await fh.sync();
      await fsyncDirectory(dirname(path));
    } catch {
      // the directory is gone (the partition was deleted meanwhile)
    } finally {
      await fh.close().catch(() => undefined);
    }
  };
  const p = run().finally(() => backgroundFlushes.delete(p));
  backgroundFlushes.add(p);
  return p;
}

/** Deferred flushes started and not yet done, process-wide. */
export function pendingDeferredFlushes(): number {
  return backgroundFlushes.size;
}

/** Resolves once every deferred flush started so far has run (shutdown, tests). */
export async function deferredFlushes(): Promise<void> {
  while (backgroundFlushes.size > 0) await Promise.all([...backgroundFlushes]);
}

export interface CheckpointFormat<T> {
  toLine(entry: T): string;
  /** Parses one entry line; returns null when malformed. */
  fromLine(line: string): T | null;
}

/** Renders entries in Kafka's checkpoint text format. */
export function formatCheckpoint<T>(version: number, entries: Iterable<T>, format: CheckpointFormat<T>): string {
  const lines: string[] = [];
  for (const e of entries) lines.push(format.toLine(e));
  return `${version}\n${lines.length}\n${lines.length ? `${lines.join('\n')}\n` : ''}`;
}

/** Parses Kafka's checkpoint text format; throws CorruptCheckpointError on any inconsistency. */
export function parseCheckpoint<T>(text: string, version: number, format: CheckpointFormat<T>, source = 'checkpoint'): T[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const fail = (why: string): never => {
    throw new CorruptCheckpointError(`Malformed checkpoint file ${source}: ${why}`);
  };
  const versionLine = lines[0];
  if (versionLine === undefined) return fail('empty file');
  if (!/^\s*\d+\s*$/.test(versionLine) || Number(versionLine) !== version) {
    return fail(`unrecognized version "${versionLine.trim()}" (expected ${version})`);
  }
  const countLine = lines[1];
  if (countLine === undefined || !/^\s*\d+\s*$/.test(countLine)) return fail(`bad entry count line "${countLine ?? ''}"`);
  const count = Number(countLine);
  const entries: T[] = [];
  for (let i = 2; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    const e = format.fromLine(line.trim());
    if (e === null) return fail(`malformed line "${line}"`);
    entries.push(e);
  }
  if (entries.length !== count) return fail(`expected ${count} entries but found ${entries.length}`);
  return entries;
}

/** A checkpoint file on disk (one writer at a time: see writeFileAtomically). Reads of a missing file give []. */
export class CheckpointFile<T> {
  constructor(
    readonly path: string,
    readonly version: number,
    readonly format: CheckpointFormat<T>,
  ) {}

  write(entries: Iterable<T>, fsync: Fsync = 'now'): Promise<void> {
    return writeFileAtomically(this.path, formatCheckpoint(this.version, entries, this.format), fsync);
  }

  async read(): Promise<T[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return parseCheckpoint(text, this.version, this.format, this.path);
  }
}

export interface TopicPartitionOffset extends TopicPartition {
  offset: bigint;
}

const INT_RE = /^-?\d+$/;

export const OFFSET_CHECKPOINT_FORMAT: CheckpointFormat<TopicPartitionOffset> = {
  toLine: (e) => `${e.topic} ${e.partition} ${e.offset}`,
  fromLine: (line) => {
    const parts = line.split(/\s+/);
    if (parts.length !== 3) return null;
    const [topic, partition, offset] = parts as [string, string, string];
    if (!INT_RE.test(partition) || !INT_RE.test(offset)) return null;
    return { topic, partition: Number(partition), offset: BigInt(offset) };
  },
};

/**
 * `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`, `replication-offset-checkpoint`
 * (version 0, `topic partition offset` lines).
 */
export class OffsetCheckpointFile {
  static readonly VERSION = 0;
  private readonly file: CheckpointFile<TopicPartitionOffset>;

  constructor(readonly path: string) {
    this.file = new CheckpointFile(path, OffsetCheckpointFile.VERSION, OFFSET_CHECKPOINT_FORMAT);
  }

  write(entries: Iterable<TopicPartitionOffset>): Promise<void> {
    return this.file.write(entries);
  }

  /** Entries keyed by `topic-partition`. */
  async read(): Promise<Map<string, bigint>> {
    const map = new Map<string, bigint>();
    for (const e of await this.file.read()) map.set(topicPartitionKey(e), e.offset);
    return map;
  }

  /** The entries as written, in file order. */
  readEntries(): Promise<TopicPartitionOffset[]> {
    return this.file.read();
  }
}

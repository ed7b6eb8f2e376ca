/**
 * Kafka's TransactionIndex: one `<baseOffset 20 digits>.txnindex` file per segment listing the
 * aborted transactions whose ABORT marker lies in that segment, in marker order. Each entry is 34
 * bytes, big-endian:
 *
 *   version int16 (0) | producerId int64 | firstOffset int64 | lastOffset int64 | lastStableOffset int64
 *
 * `lastOffset` is the marker's offset; `lastStableOffset` the partition's LSO once the marker was
 * written (a fetch that ends below it needs no later entry). The file is created on the first
 * append and read lazily (the entries stay in memory afterwards: aborted transactions are few).
 */
import { constants } from 'node:fs';
import { open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { CorruptIndexError } from './errors.js';

export const ABORTED_TXN_VERSION = 0;
export const ABORTED_TXN_SIZE = 34;

export interface AbortedTxn {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  lastStableOffset: bigint;
}

/** Kafka's TxnIndexSearchResult: complete when an entry's LSO reached the search's upper bound. */
export interface TxnIndexSearchResult {
  abortedTransactions: AbortedTxn[];
  isComplete: boolean;
}

export function encodeAbortedTxn(t: AbortedTxn, buf = Buffer.alloc(ABORTED_TXN_SIZE), pos = 0): Buffer {
  buf.writeInt16BE(ABORTED_TXN_VERSION, pos);
  buf.writeBigInt64BE(t.producerId, pos + 2);
  buf.writeBigInt64BE(t.firstOffset, pos + 10);
  buf.writeBigInt64BE(t.lastOffset, pos + 18);
  buf.writeBigInt64BE(t.lastStableOffset, pos + 26);
  return buf;
}

export function decodeAbortedTxn(buf: Buffer, pos: number): AbortedTxn {
  const version = buf.readInt16BE(pos);
  if (version !== ABORTED_TXN_VERSION) throw new CorruptIndexError(`Unexpected aborted transaction version ${version} at position ${pos}`);
  return {
    producerId: buf.readBigInt64BE(pos + 2),
    firstOffset: buf.readBigInt64BE(pos + 10),
    lastOffset: buf.readBigInt64BE(pos + 18),
    lastStableOffset: buf.readBigInt64BE(pos + 26),
  };
}

export class TransactionIndex {
  private entries: AbortedTxn[] | null = null;
  private loading: Promise<AbortedTxn[]> | null = null;
  private fh: FileHandle | null = null;

  constructor(
    private filePath: string,
    readonly startOffset: bigint,
  ) {}

  get path(): string {
    return this.filePath;
  }

  /** Loaded and without entries (a search can skip it without awaiting). */
  get isKnownEmpty(): boolean {
    return this.entries !== null && this.entries.length === 0;
  }

  /** Adds an aborted transaction; its last offset must exceed every entry's (Kafka's rule). */
  async append(txn: AbortedTxn): Promise<void> {
    const entries = await this.load();
    const last = entries.at(-1);
    if (last && last.lastOffset >= txn.lastOffset) {
      throw new RangeError(
        `The last offset of appended transactions must increase sequentially, but ${txn.lastOffset} is not greater than current last offset ${last.lastOffset} of index ${this.filePath}`,
      );
    }
    const fh = await this.handle();
    await fh.write(encodeAbortedTxn(txn), 0, ABORTED_TXN_SIZE, entries.length * ABORTED_TXN_SIZE);
    entries.push(txn);
  }

  /** Every entry, in file order. */
  async allAbortedTxns(): Promise<readonly AbortedTxn[]> {
    return this.load();
  }

  /**
   * Kafka's collectAbortedTxns: entries overlapping [fetchOffset, upperBoundOffset) — last offset
   * >= fetchOffset and first offset < upperBoundOffset — up to the first whose LSO reaches the bound.
   */
  async collectAbortedTxns(fetchOffset: bigint, upperBoundOffset: bigint): Promise<TxnIndexSearchResult> {
    const out: AbortedTxn[] = [];
    for (const t of await this.load()) {
      if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) out.push(t);
      if (t.lastStableOffset >= upperBoundOffset) return { abortedTransactions: out, isComplete: true };
    }
    return { abortedTransactions: out, isComplete: false };
  }

  /** Drops the entries whose marker is at or after `offset` (the log is truncated there). */
  async truncateTo(offset: bigint): Promise<void> {
    const entries = await this.load();
    const keep = entries.findIndex((t) => t.lastOffset >= offset);
    if (keep < 0) return;
    entries.length = keep;
    await (await this.handle()).truncate(keep * ABORTED_TXN_SIZE);
  }

  /** Empties the index (a recovery rebuilds it). */
  async reset(): Promise<void> {
    this.entries = [];
    if (this.fh) await this.fh.truncate(0);
    else await unlinkQuiet(this.filePath);
  }

  async flush(): Promise<void> {
    if (this.fh) await this.fh.sync();
  }

  async renameTo(path: string): Promise<void> {
    try {
      await rename(this.filePath, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.filePath = path;
  }

  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    if (fh) await fh.close();
  }

  async deleteIfExists(): Promise<void> {
    await this.close();
    this.entries = [];
    await unlinkQuiet(this.filePath);
  }

  private async handle(): Promise<FileHandle> {
    // O_CREAT without O_TRUNC/O_APPEND: positional writes land where they are asked to
    this.fh ??= await open(this.filePath, constants.O_RDWR | constants.O_CREAT, 0o644);
    return this.fh;
  }

  private load(): Promise<AbortedTxn[]> {
    if (this.entries) return Promise.resolve(this.entries);
    this.loading ??= this.read().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async read(): Promise<AbortedTxn[]> {
    let buf: Buffer;
    try {
      buf = await readFile(this.filePath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`Could not read transaction index ${this.filePath}`, { cause: err });
      buf = Buffer.alloc(0);
    }
    const entries: AbortedTxn[] = [];
    // a torn last entry (a crash mid-write) is dropped; the next append overwrites it
    for (let pos = 0; pos + ABORTED_TXN_SIZE <= buf.length; pos += ABORTED_TXN_SIZE) entries.push(decodeAbortedTxn(buf, pos));
    this.entries ??= entries;
    return this.entries;
  }
}

async function unlinkQuiet(path: string): Promise<void> {
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

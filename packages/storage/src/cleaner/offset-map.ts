/**
 * Kafka's SkimpyOffsetMap: key → latest offset for the dirty section of a log, in a fixed amount of
 * memory. Keys are not stored, only their MD5 hash (16 bytes) followed by the offset (8 bytes), in
 * an open-addressing table: a slot is found by reading 4-byte windows of the hash and then linear
 * steps. Hash collisions between different keys are accepted (as in Kafka): with 128-bit hashes they
 * do not happen in practice.
 *
 * The table is allocated on first use, so a broker that never cleans a log does not pay for it.
 */
import { createHash } from 'node:crypto';

export const HASH_SIZE = 16;
export const BYTES_PER_ENTRY = HASH_SIZE + 8;

export class SkimpyOffsetMap {
  private bytes: Buffer | null = null;
  private entries = 0;
  private lookups = 0;
  private probes = 0;
  private lastOffset = -1n;
  private readonly hash = Buffer.alloc(HASH_SIZE);
  /** Slots in the table. */
  readonly slots: number;

  /** `memory`: bytes the table may use (log.cleaner.dedupe.buffer.size / log.cleaner.threads). */
  constructor(readonly memory: number) {
    this.slots = Math.floor(memory / BYTES_PER_ENTRY);
    if (this.slots < 1) throw new RangeError(`An offset map of ${memory} bytes cannot hold a single entry`);
  }

  /** Entries in the map. */
  get size(): number {
    return this.entries;
  }

  /** Fraction of the slots in use. */
  get utilization(): number {
    return this.entries / this.slots;
  }

  /** Average number of slots probed per put/get (1 = no collisions). */
  get collisionRate(): number {
    return this.lookups === 0 ? 0 : this.probes / this.lookups;
  }

  /** The largest offset put or recorded with `updateLatestOffset` (-1 when none). */
  get latestOffset(): bigint {
    return this.lastOffset;
  }

  updateLatestOffset(offset: bigint): void {
    this.lastOffset = offset;
  }

  /** Maps `key` to `offset` (the offset replaces an earlier one for the same key). */
  put(key: Buffer, offset: bigint): void {
    const table = this.table();
    this.lookups++;
    this.hashInto(key);
    for (let attempt = 0; ; attempt++) {
      const pos = this.positionOf(attempt);
      if (isEmpty(table, pos) || attempt >= this.slots + HASH_SIZE) {
        if (this.entries >= this.slots) throw new RangeError('Attempted to add a new entry to a full offset map');
        this.hash.copy(table, pos);
        table.writeBigInt64BE(offset, pos + HASH_SIZE);
        this.entries++;
        break;
      }
      if (table.compare(this.hash, 0, HASH_SIZE, pos, pos + HASH_SIZE) === 0) {
        table.writeBigInt64BE(offset, pos + HASH_SIZE);
        break;
      }
    }
    this.lastOffset = offset;
  }

  /** The offset stored for `key`, or -1 when it is not in the map. */
  get(key: Buffer): bigint {
    const table = this.bytes;
    if (!table || this.entries === 0) return -1n;
    this.lookups++;
    this.hashInto(key);
    // every slot of a full table may be visited once before giving up
    for (let attempt = 0; attempt < this.slots + HASH_SIZE; attempt++) {
      const pos = this.positionOf(attempt);
      if (isEmpty(table, pos)) return -1n;
      if (table.compare(this.hash, 0, HASH_SIZE, pos, pos + HASH_SIZE) === 0) return table.readBigInt64BE(pos + HASH_SIZE);
    }
    return -1n;
  }

  /** Empties the map (the table stays allocated). */
  clear(): void {
    this.bytes?.fill(0);
    this.entries = 0;
    this.lookups = 0;
    this.probes = 0;
    this.lastOffset = -1n;
  }

  private table(): Buffer {
    this.bytes ??= Buffer.alloc(this.slots * BYTES_PER_ENTRY);
    return this.bytes;
  }

  private hashInto(key: Buffer): void {
    createHash('md5').update(key).digest().copy(this.hash);
  }

  /**
   * Kafka's probing: attempts 0..12 read the int at byte `attempt` of the hash; later attempts step
   * linearly from the last window.
   */
  private positionOf(attempt: number): number {
    const window = Math.min(attempt, HASH_SIZE - 4);
    const probe = this.hash.readInt32BE(window) + Math.max(0, attempt - HASH_SIZE + 4);
    this.probes++;
    // Kafka's Utils.abs (Integer.MIN_VALUE maps to 0), then modulo the slot count
    const abs = probe === -2147483648 ? 0 : Math.abs(probe);
    return (abs % this.slots) * BYTES_PER_ENTRY;
  }
}

/** An all-zero entry is free (a real key hashing to 16 zero bytes at offset 0 is not a concern). */
function isEmpty(table: Buffer, pos: number): boolean {
  for (let i = 0; i < BYTES_PER_ENTRY; i += 4) if (table.readUInt32BE(pos + i) !== 0) return false;
  return true;
}

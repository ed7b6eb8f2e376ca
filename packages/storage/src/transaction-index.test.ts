import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ABORTED_TXN_SIZE, TransactionIndex, type AbortedTxn } from './transaction-index.js';
import { makeTempDir } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir('samsa-txnindex-'));
});
afterEach(async () => {
  await cleanup();
});

const txn = (producerId: bigint, firstOffset: bigint, lastOffset: bigint, lastStableOffset: bigint): AbortedTxn => ({
  producerId,
  firstOffset,
  lastOffset,
  lastStableOffset,
});

describe('transaction index', () => {
  test('transaction index – entries are 34 bytes: version 0, producerId, firstOffset, lastOffset, lastStableOffset (big-endian)', async () => {
    const path = join(dir, '00000000000000000000.txnindex');
    const idx = new TransactionIndex(path, 0n);
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' }); // created on first use
    await idx.append(txn(0x0102030405060708n, 5n, 9n, 10n));
    await idx.append(txn(7n, 11n, 20n, 15n));
    await idx.flush();
    const bytes = await readFile(path);
    expect(ABORTED_TXN_SIZE).toBe(34);
    expect(bytes.length).toBe(68);
    expect(bytes.subarray(0, 34).toString('hex')).toBe('0000' + '0102030405060708' + '0000000000000005' + '0000000000000009' + '000000000000000a');
    expect(bytes.readInt16BE(34)).toBe(0);
    expect(bytes.readBigInt64BE(36)).toBe(7n);
    await idx.close();
    const reopened = new TransactionIndex(path, 0n);
    expect(await reopened.allAbortedTxns()).toEqual([txn(0x0102030405060708n, 5n, 9n, 10n), txn(7n, 11n, 20n, 15n)]);
    await reopened.close();
  });

  test('transaction index – last offsets must increase', async () => {
    const idx = new TransactionIndex(join(dir, '00000000000000000000.txnindex'), 0n);
    await idx.append(txn(1n, 0n, 10n, 11n));
    await expect(idx.append(txn(2n, 3n, 10n, 11n))).rejects.toThrow(/must increase/);
    await idx.close();
  });

  test('transaction index – truncateTo drops entries whose last offset is at or past the offset, in memory and on disk', async () => {
    const path = join(dir, '00000000000000000000.txnindex');
    const idx = new TransactionIndex(path, 0n);
    for (const [first, last] of [
      [0n, 4n],
      [5n, 9n],
      [10n, 14n],
    ] as const)
      await idx.append(txn(1n, first, last, last + 1n));
    await idx.truncateTo(9n);
    expect((await idx.allAbortedTxns()).map((t) => t.lastOffset)).toEqual([4n]);
    expect((await stat(path)).size).toBe(34);
    await idx.append(txn(1n, 6n, 8n, 9n));
    await idx.close();
    expect((await new TransactionIndex(path, 0n).allAbortedTxns()).map((t) => t.lastOffset)).toEqual([4n, 8n]);
  });

  test('transaction index – collectAbortedTxns keeps overlapping entries and is complete once an LSO reaches the upper bound', async () => {
    const idx = new TransactionIndex(join(dir, '00000000000000000000.txnindex'), 0n);
    await idx.append(txn(1n, 0n, 4n, 5n));
    await idx.append(txn(2n, 3n, 10n, 11n));
    await idx.append(txn(3n, 12n, 20n, 21n));
    // [5, 12): txn 1 ends before 5, txn 3 starts at 12; txn 2's LSO 11 < 12, txn 3's 21 >= 12
    expect(await idx.collectAbortedTxns(5n, 12n)).toEqual({ abortedTransactions: [txn(2n, 3n, 10n, 11n)], isComplete: true });
    expect(await idx.collectAbortedTxns(0n, 100n)).toEqual({
      abortedTransactions: [txn(1n, 0n, 4n, 5n), txn(2n, 3n, 10n, 11n), txn(3n, 12n, 20n, 21n)],
      isComplete: false,
    });
    await idx.close();
  });

  test('transaction index – a torn last entry is ignored and overwritten; reset empties the file', async () => {
    const path = join(dir, '00000000000000000000.txnindex');
    const idx = new TransactionIndex(path, 0n);
    await idx.append(txn(1n, 0n, 4n, 5n));
    await idx.close();
    const whole = await readFile(path);
    await writeFile(path, Buffer.concat([whole, Buffer.alloc(20, 7)]));
    const torn = new TransactionIndex(path, 0n);
    expect(await torn.allAbortedTxns()).toHaveLength(1);
    await torn.append(txn(1n, 5n, 8n, 9n));
    await torn.close();
    expect(await new TransactionIndex(path, 0n).allAbortedTxns()).toEqual([txn(1n, 0n, 4n, 5n), txn(1n, 5n, 8n, 9n)]);
    const r = new TransactionIndex(path, 0n);
    await r.append(txn(1n, 9n, 12n, 13n));
    await r.reset();
    await r.close();
    expect((await stat(path)).size).toBe(0);
    expect(await new TransactionIndex(path, 0n).allAbortedTxns()).toEqual([]);
  });
});

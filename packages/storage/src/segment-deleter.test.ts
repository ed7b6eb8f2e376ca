import { pino } from 'pino';
import { describe, expect, test, vi } from 'vitest';
import { SegmentDeleter } from './segment-deleter.js';
import type { LogSegment } from './segment.js';

describe('segment deleter', () => {
  test('segment deleter – awaitAll also waits for a deletion already under way', async () => {
    let releaseFlush!: () => void;
    const flush = new Promise<void>((r) => (releaseFlush = r));
    const beforeDelete = vi.fn(() => flush);
    const deleter = new SegmentDeleter(pino({ enabled: false }), beforeDelete);
    const deleteFiles = vi.fn(async () => undefined);
    const segment = { baseOffset: 0n, changeFileSuffixes: async () => undefined, deleteFiles } as unknown as LogSegment;
    await deleter.schedule([segment], 0);
    // the timer fired: the deletion waits for the flush before removing the files
    await vi.waitFor(() => expect(beforeDelete).toHaveBeenCalled());
    let waited = false;
    const all = deleter.awaitAll().then(() => (waited = true));
    await Promise.resolve();
    expect(waited).toBe(false);
    expect(deleter.pendingCount).toBe(1);
    releaseFlush();
    await all;
    expect(deleteFiles).toHaveBeenCalledTimes(1);
    expect(deleter.pendingCount).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { forEachBounded } from './bounded-parallel.js';

describe('bounded parallel', () => {
  it('bounded parallel – runs every item, never more than the limit at once, starting them in order', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const gates: Array<() => void> = [];
    const run = forEachBounded([0, 1, 2, 3, 4, 5, 6], 3, async (item) => {
      started.push(item);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
    });
    // release one call at a time until all are done
    while (started.length < 7 || inFlight > 0) {
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    await run;
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most).toBe(3);
  });

  it('bounded parallel – an error rejects only after every call settled, with the first error', async () => {
    const done: number[] = [];
    await expect(
      forEachBounded([1, 2, 3, 4], 2, async (item) => {
        await new Promise((r) => setTimeout(r, item === 1 ? 20 : 1));
        if (item === 2 || item === 3) throw new Error(`item ${item}`);
        done.push(item);
      }),
    ).rejects.toThrow('item 2');
    expect(done.sort()).toEqual([1, 4]);
  });

  it('bounded parallel – an empty list resolves; a limit below 1 is refused', async () => {
    await expect(forEachBounded([], 4, async () => undefined)).resolves.toBeUndefined();
    await expect(forEachBounded([1], 0, async () => undefined)).rejects.toThrow(RangeError);
  });
});

import { describe, expect, test } from 'vitest';
import { OpenIndexFiles, type IndexFileHolder } from './open-index-files.js';

class FakeHolder implements IndexFileHolder {
  busy = false;
  closes = 0;
  constructor(readonly name: string) {}
  get isIdle(): boolean {
    return !this.busy;
  }
  evictFile(): Promise<void> {
    this.closes++;
    return Promise.resolve();
  }
}

/** Reserves a descriptor for `h` and registers it (what an index does when it opens its file). */
async function open(files: OpenIndexFiles, h: FakeHolder): Promise<void> {
  await files.reserve();
  files.opened(h);
}

describe('open index files', () => {
  test('open index files – under the cap opening is immediate; beyond it the least recently used idle file is closed', async () => {
    const files = new OpenIndexFiles(2);
    const [a, b, c] = [new FakeHolder('a'), new FakeHolder('b'), new FakeHolder('c')];
    expect(files.reserve()).toBeUndefined();
    files.opened(a);
    expect(files.reserve()).toBeUndefined();
    files.opened(b);
    files.touch(a); // b is now the least recently used
    await open(files, c);
    expect([a.closes, b.closes, c.closes]).toEqual([0, 1, 0]);
    expect(files.openCount).toBe(2);
    expect(files.evictions).toBe(1);
    // b reopens: a is the least recently used now
    await open(files, b);
    expect([a.closes, b.closes, c.closes]).toEqual([1, 1, 0]);
    expect(files.openCount).toBe(2);
  });

  test('open index files – a busy file is never closed; with every file busy an opener waits until one is idle', async () => {
    const files = new OpenIndexFiles(2);
    const [a, b, c] = [new FakeHolder('a'), new FakeHolder('b'), new FakeHolder('c')];
    await open(files, a);
    await open(files, b);
    a.busy = true;
    await open(files, c);
    expect([a.closes, b.closes]).toEqual([0, 1]); // a was older but busy
    c.busy = true;
    let opened = false;
    const waiting = open(files, b).then(() => (opened = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(opened).toBe(false);
    expect(files.openCount).toBe(2);
    c.busy = false;
    files.idle();
    await waiting;
    expect(c.closes).toBe(1);
    expect(a.closes).toBe(0);
    expect(files.openCount).toBe(2);
  });

  test('open index files – a file closed by its holder frees its slot for a waiting opener', async () => {
    const files = new OpenIndexFiles(1);
    const [a, b] = [new FakeHolder('a'), new FakeHolder('b')];
    await open(files, a);
    a.busy = true;
    const waiting = open(files, b);
    expect(files.detach(a)).toBe(true);
    files.release(); // a's descriptor closed
    await waiting;
    expect(a.closes).toBe(0);
    expect(files.openCount).toBe(1);
    expect(files.detach(b)).toBe(true);
    files.release();
    expect(files.openCount).toBe(0);
    expect(() => new OpenIndexFiles(0)).toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import { SystemTimer, TimerTaskEntry, TimingWheel, type TimerTaskList } from './timing-wheel.js';
import { DelayedOperation, DelayedOperationPurgatory } from './purgatory.js';

class Op extends DelayedOperation {
  ready = false;
  expired = false;
  completedAt = 0;
  constructor(
    delay: number,
    private readonly onDone?: () => void,
  ) {
    super(delay);
  }
  tryComplete(): boolean {
    return this.ready ? this.forceComplete() : false;
  }
  protected onExpiration(): void {
    this.expired = true;
  }
  protected onComplete(): void {
    this.completedAt = Date.now();
    this.onDone?.();
  }
}

describe('timing wheel', () => {
  it('timing wheel – tasks fire in expiration order, each once, across wheel levels', async () => {
    const timer = new SystemTimer(1, 20);
    const fired: number[] = [];
    const start = Date.now();
    // -5: already due when added (runs at once); the others land on wheel levels 1 and 2
    const delays = [5, 450, 1, 30, 120, 25, -5, 60, 19, 21];
    const all = Promise.all(delays.map((d) => new Promise<void>((resolve) => timer.add({ expirationMs: start + d, run: () => (fired.push(d), resolve()) }))));
    expect(timer.size).toBe(delays.length - 1); // the overdue task ran at once
    await all;
    expect(fired).toEqual([...delays].sort((a, b) => a - b));
    expect(timer.size).toBe(0);
    timer.shutdown();
  });

  it('timing wheel – a new task lands in an existing bucket without a new queue entry (O(1))', () => {
    const pushed: number[] = [];
    const queue = { push: (b: TimerTaskList) => pushed.push(b.expiration) } as unknown as ConstructorParameters<typeof TimingWheel>[3];
    const wheel = new TimingWheel(1, 20, 1000, queue);
    const mk = (exp: number) => new TimerTaskEntry({ expirationMs: exp, run: () => undefined });
    expect(wheel.add(mk(1005))).toBe(true);
    expect(wheel.add(mk(1005))).toBe(true);
    expect(pushed).toEqual([1005]);
    // beyond this wheel's span (20 ms): an overflow wheel with 20 ms buckets
    expect(wheel.add(mk(1100))).toBe(true);
    expect(wheel.add(mk(1105))).toBe(true);
    expect(pushed).toEqual([1005, 1100]);
    // already due
    expect(wheel.add(mk(1000))).toBe(false);
  });

  it('timing wheel – cancelled tasks never run', async () => {
    const timer = new SystemTimer();
    let ran = false;
    const task = { expirationMs: Date.now() + 20, run: () => (ran = true) };
    timer.add(task);
    timer.cancel(task);
    expect(timer.size).toBe(0);
    await new Promise<void>((r) => timer.add({ expirationMs: Date.now() + 40, run: () => r() }));
    expect(ran).toBe(false);
  });
});

describe('timing wheel at scale', () => {
  async function runMany(n: number): Promise<{ addMs: number; fired: number; outOfOrder: number }> {
    const timer = new SystemTimer(1, 20);
    const start = Date.now();
    let fired = 0;
    let lastExp = 0;
    let outOfOrder = 0;
    let resolveAll!: () => void;
    const all = new Promise<void>((r) => (resolveAll = r));
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      // spread over 1.5 s so the wheel, its overflow wheel and bucket reuse are all exercised
      const expirationMs = start + 1 + ((i * 7919) % 1500);
      timer.add({
        expirationMs,
        run: () => {
          // within one 1 ms bucket order is free; across buckets it must hold
          if (expirationMs < lastExp - 1) outOfOrder++;
          lastExp = Math.max(lastExp, expirationMs);
          if (++fired === n) resolveAll();
        },
      });
    }
    const addMs = performance.now() - t0;
    await all;
    timer.shutdown();
    return { addMs, fired, outOfOrder };
  }

  it('timing wheel – 1,000,000 timers all fire in order, and insertion cost grows linearly', async () => {
    const small = await runMany(100_000);
    const big = await runMany(1_000_000);
    expect(small.fired).toBe(100_000);
    expect(big.fired).toBe(1_000_000);
    expect(big.outOfOrder).toBe(0);
    // 10x the timers must cost far less than 100x the time (quadratic); allow noise on a busy box
    expect(big.addMs / Math.max(small.addMs, 1)).toBeLessThan(40);
  }, 60_000);
});

describe('purgatory', () => {
  it('purgatory – an operation completes on an event for its key, or expires at its timeout', async () => {
    const timer = new SystemTimer();
    const p = new DelayedOperationPurgatory<Op>('test', timer);
    const a = new Op(10_000);
    expect(p.tryCompleteElseWatch(a, ['t-0', 't-1'])).toBe(false);
    expect(p.delayed).toBe(1);
    expect(p.checkAndComplete('t-0')).toBe(0);
    a.ready = true;
    expect(p.checkAndComplete('t-1')).toBe(1);
    expect(a.isCompleted && !a.expired).toBe(true);
    expect(timer.size).toBe(0); // its expiration was cancelled
    const b = await new Promise<Op>((resolve) => {
      const op: Op = new Op(30, () => resolve(op));
      p.tryCompleteElseWatch(op, ['t-0']);
    });
    expect(b.expired).toBe(true);
    expect(p.checkAndComplete('t-0')).toBe(0); // expired and completed ops are only dropped from the watcher list
    expect(p.delayed).toBe(0);
  });

  it('purgatory – an operation ready at creation completes without being watched', () => {
    const p = new DelayedOperationPurgatory<Op>('test', new SystemTimer());
    const op = new Op(1000);
    op.ready = true;
    expect(p.tryCompleteElseWatch(op, ['k'])).toBe(true);
    expect(p.delayed).toBe(0);
  });
});

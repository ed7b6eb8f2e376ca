import { describe, expect, test } from 'vitest';
import { planSegmentReplacement } from './segment-swap.js';
import type { LogSegment } from './segment.js';

const seg = (base: number): LogSegment => ({ baseOffset: BigInt(base) }) as unknown as LogSegment;

describe('segment swap', () => {
  const [a, b, c, d] = [seg(0), seg(100), seg(200), seg(300)] as [LogSegment, LogSegment, LogSegment, LogSegment];
  const current = [a, b, c, d];

  test('segment swap – a run of inactive segments is replaced by the cleaned segment starting at its base', () => {
    const cleaned = seg(0);
    expect(planSegmentReplacement(current, [cleaned], [a, b])).toEqual([cleaned, c, d]);
    const cleaned2 = seg(100);
    expect(planSegmentReplacement(current, [cleaned2], [c, b])).toEqual([a, cleaned2, d]);
  });

  test('segment swap – refused when an old segment left the log, the run has a hole, includes the active segment, or the bases do not fit', () => {
    expect(planSegmentReplacement([b, c, d], [seg(0)], [a, b])).toBeNull();
    expect(planSegmentReplacement(current, [seg(0)], [a, c])).toBeNull();
    expect(planSegmentReplacement(current, [seg(200)], [c, d])).toBeNull();
    expect(planSegmentReplacement(current, [seg(50)], [a, b])).toBeNull();
    expect(planSegmentReplacement(current, [seg(0), seg(200)], [a, b])).toBeNull();
    expect(planSegmentReplacement(current, [], [a])).toBeNull();
  });
});

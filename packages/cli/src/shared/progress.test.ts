import { describe, expect, it } from 'vitest';
import { renderBar } from './progress.js';

describe('progress', () => {
  it('progress – the bar fills with the fraction done and fits the width', () => {
    const b = renderBar(50, 100, 'msgs', 1000, 60);
    expect(b.length).toBeLessThanOrEqual(60);
    expect(b).toContain('50.0% 50/100 msgs 50.0 msgs/s');
    const inner = /\[([#.]+)\]/.exec(b)![1]!;
    expect(inner.split('#').length - 1).toBe(Math.round(inner.length / 2));
  });
});

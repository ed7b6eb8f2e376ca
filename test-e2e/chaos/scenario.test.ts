/** The CHAOS_PARTITIONS flag's helpers (no cluster). */
import { describe, expect, it } from 'vitest';
import { chaosAssignment, parseChaosPartitions } from './scenario.js';

describe('chaos scenario helpers', () => {
  it('chaos scenario – CHAOS_PARTITIONS: unset or empty is no flag, a positive integer is the count, anything else is an error', () => {
    expect(parseChaosPartitions(undefined)).toBeUndefined();
    expect(parseChaosPartitions('')).toBeUndefined();
    expect(parseChaosPartitions('3000')).toBe(3000);
    for (const bad of ['0', '-3', '2.5', 'many']) expect(() => parseChaosPartitions(bad)).toThrow(/CHAOS_PARTITIONS must be an integer >= 1/);
  });

  it("chaos scenario – chaosAssignment repeats a scenario's rows up to the flag's count and leaves them alone without it", () => {
    const rows = [
      [0, 1, 2],
      [1, 2, 0],
    ];
    // null is "no flag" (an undefined argument would take the default, the environment's CHAOS_PARTITIONS)
    expect(chaosAssignment(rows, null)).toBe(rows);
    expect(chaosAssignment(rows, 1)).toBe(rows);
    const big = chaosAssignment(rows, 3000);
    expect(big).toHaveLength(3000);
    expect(big.every((r, p) => r === rows[p % 2])).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { formatReport } from './report.js';
import { formatValue, parseValue } from './workload.js';
import type { VerifyReport } from './checker.js';

const base: VerifyReport = {
  topic: 't',
  runId: 'r1',
  idempotent: true,
  acks: -1,
  durationMs: 2000,
  attempted: 10,
  acknowledged: 10,
  failedSends: 0,
  unresolvedSends: 0,
  consumed: 10,
  lost: 0,
  duplicates: 0,
  reordered: 0,
  offsetsBackwards: 0,
  ackedOffsetMismatches: 0,
  divergentPartitions: [],
  incompletePartitions: [],
  partitions: [
    {
      partition: 0,
      acknowledged: 10,
      consumed: 10,
      lost: 0,
      duplicates: 0,
      reordered: 0,
      highWatermark: 10,
      replicasCompared: [0, 1, 2],
      divergentReplicas: [],
      laggingReplicas: [],
      incomplete: null,
    },
  ],
  replicasChecked: true,
  violations: [],
  lostSamples: [],
  errors: {},
  ok: true,
};

describe('verify report', () => {
  it('verify – values carry run, worker and sequence; other values are ignored', () => {
    expect(parseValue(formatValue('ab12', 3, 41))).toEqual({ runId: 'ab12', worker: 3, seq: 41 });
    expect(parseValue(Buffer.from(formatValue('x', 0, 0)))).toEqual({ runId: 'x', worker: 0, seq: 0 });
    expect(parseValue('hello')).toBeNull();
    expect(parseValue('samsa-verify:r:a:1')).toBeNull();
    expect(parseValue(null)).toBeNull();
  });

  it('verify – the summary table shows counts per partition and OK', () => {
    const s = formatReport(base);
    expect(s).toMatch(/acknowledged\s+10\n/);
    expect(s).toMatch(/lost\s+0\n/);
    expect(s).toMatch(/^0\s+10\s+10\s+0\s+0\s+0\s+10\s+0,1,2\s+-\s+-$/m);
    expect(s.trimEnd().endsWith('OK: 0 violations')).toBe(true);
  });

  it('verify – violations are marked and listed, and the table ends FAILED', () => {
    const s = formatReport({
      ...base,
      ok: false,
      lost: 2,
      divergentPartitions: [0],
      violations: ['lost: worker 0 seq 3 acknowledged at t-0 offset 3, never read'],
    });
    expect(s).toMatch(/lost\s+2 !\n/);
    expect(s).toMatch(/divergent partitions\s+0 !\n/);
    expect(s).toContain('  lost: worker 0 seq 3 acknowledged at t-0 offset 3, never read');
    expect(s.trimEnd().endsWith('FAILED: violations found')).toBe(true);
  });

  it('verify – duplicates are not a violation without idempotence', () => {
    expect(formatReport({ ...base, idempotent: false, duplicates: 4 })).toMatch(/duplicates\s+4 \(allowed: not idempotent\)\n/);
    expect(formatReport({ ...base, duplicates: 4, ok: false })).toMatch(/duplicates\s+4 !\n/);
  });
});

/** The verify summary table (and per-partition rows) as printed by `samsa verify` and the chaos tests. */
import type { VerifyReport } from './checker.js';

function table(rows: ReadonlyArray<readonly string[]>): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A summary table: counts, then one row per partition, then the violations (if any), then OK/FAILED. */
export function formatReport(r: VerifyReport): string {
  const t = r.transactions;
  const mark = (n: number, violation = true) => (n > 0 && violation ? `${n} !` : String(n));
  const summary: string[][] = [
    ['topic', r.topic],
    [
      'run',
      `${r.runId} (${t ? 'transactional, read_committed' : r.idempotent ? 'idempotent' : 'not idempotent'}, acks=${r.acks === -1 ? 'all' : r.acks}, ${(r.durationMs / 1000).toFixed(1)} s)`,
    ],
    ['attempted', String(r.attempted)],
    ['acknowledged', String(r.acknowledged)],
    ['failed sends', String(r.failedSends) + (r.unresolvedSends ? ` (+${r.unresolvedSends} unresolved)` : '')],
    ['consumed', String(r.consumed)],
    ['lost', mark(r.lost)],
    ['duplicates', mark(r.duplicates, r.idempotent) + (r.idempotent ? '' : ' (allowed: not idempotent)')],
    ['reordered', mark(r.reordered)],
    ['offsets backwards', mark(r.offsetsBackwards)],
    ['acked offset mismatches', mark(r.ackedOffsetMismatches)],
    ['divergent partitions', r.replicasChecked ? (r.divergentPartitions.length ? `${r.divergentPartitions.join(',')} !` : '0') : 'not checked'],
  ];
  if (t) {
    summary.push(
      ['transactions', `${t.total} (${t.committed} committed, ${t.aborted} aborted, ${t.unknown} unknown)`],
      ['aborted records read', mark(t.abortedRecordsRead)],
      ['partially visible transactions', mark(t.partiallyVisible)],
      ['committed records missing', mark(t.missingCommitted)],
    );
  }
  if (r.incompletePartitions.length) summary.push(['incomplete reads', `${r.incompletePartitions.join(',')} !`]);
  const errs = Object.entries(r.errors);
  if (errs.length) summary.push(['send errors', errs.map(([k, v]) => `${k}=${v}`).join(' ')]);
  const parts: string[][] = [['PARTITION', 'ACKED', 'CONSUMED', 'LOST', 'DUP', 'REORDER', 'HW', 'REPLICAS', 'DIVERGENT', 'LAGGING']];
  for (const p of r.partitions) {
    parts.push([
      String(p.partition),
      String(p.acknowledged),
      String(p.consumed),
      String(p.lost),
      String(p.duplicates),
      String(p.reordered),
      String(p.highWatermark),
      p.replicasCompared.join(',') || '-',
      p.divergentReplicas.join(',') || '-',
      p.laggingReplicas.join(',') || '-',
    ]);
  }
  const out = [table(summary), '', table(parts)];
  if (r.violations.length) out.push('', 'violations:', ...r.violations.map((v) => `  ${v}`));
  out.push('', r.ok ? 'OK: 0 violations' : 'FAILED: violations found');
  return out.join('\n');
}

/**
 * The segment list after a swap (Kafka's replaceSegments, the list part): `oldSegments` must be a
 * contiguous run of the log's inactive segments (same objects), and the new segments must start at
 * the run's first base offset and lie before the segment that follows it.
 */
import type { LogSegment } from './segment.js';

/** The new segment list, or null when the old segments are no longer a run of inactive segments. */
export function planSegmentReplacement(
  current: readonly LogSegment[],
  newSegments: readonly LogSegment[],
  oldSegments: readonly LogSegment[],
): LogSegment[] | null {
  if (oldSegments.length === 0 || newSegments.length === 0) return null;
  const sortedOld = [...oldSegments].sort(byBaseOffset);
  const first = current.indexOf(sortedOld[0] as LogSegment);
  if (first < 0) return null;
  for (let i = 0; i < sortedOld.length; i++) if (current[first + i] !== sortedOld[i]) return null;
  const after = first + sortedOld.length;
  // the active segment is never replaced
  if (after >= current.length) return null;
  const sortedNew = [...newSegments].sort(byBaseOffset);
  const next = current[after] as LogSegment;
  if ((sortedNew[0] as LogSegment).baseOffset !== (sortedOld[0] as LogSegment).baseOffset) return null;
  if (sortedNew.some((s) => s.baseOffset >= next.baseOffset)) return null;
  return [...current.slice(0, first), ...sortedNew, ...current.slice(after)];
}

function byBaseOffset(a: LogSegment, b: LogSegment): number {
  return a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0;
}

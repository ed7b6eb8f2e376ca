/**
 * Header-only walk over a segment's log file for rebuilding producer state: reads the file in
 * chunks and hands every batch header (61 bytes, producer fields included) to a callback. Record
 * bytes are skipped, never decoded; a batch bigger than a chunk costs one extra read.
 */
import { ATTRIBUTES_OFFSET, BATCH_LENGTH_OFFSET, CONTROL_FLAG_MASK, LOG_OVERHEAD, MAGIC_OFFSET, RECORD_BATCH_OVERHEAD } from '@samsa/protocol';
import type { LogSegment } from './segment.js';

const CHUNK = 256 * 1024;

/**
 * Calls `onBatch(chunk, pos)` for each batch of `segment` starting at file position `start` whose
 * base offset is below `endOffset` (`chunk` holds at least the batch header at `pos`, and the whole
 * batch for a control batch, whose marker record is read). Stops at the
 * end, at `endOffset`, or at the first bytes that are not a complete v2 batch (recovery has already
 * truncated torn tails; this only guards).
 */
export async function scanSegmentHeaders(segment: LogSegment, start: number, endOffset: bigint, onBatch: (chunk: Buffer, pos: number) => void): Promise<void> {
  const file = segment.log;
  const end = file.sizeInBytes;
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(RECORD_BATCH_OVERHEAD, end - start)));
  let chunkPos = 0;
  let chunkLen = 0;
  let pos = start;
  while (end - pos >= RECORD_BATCH_OVERHEAD) {
    if (pos < chunkPos || pos + RECORD_BATCH_OVERHEAD > chunkPos + chunkLen) {
      chunkPos = pos;
      chunkLen = await file.readInto(chunk, 0, Math.min(chunk.length, end - pos), pos);
      if (chunkLen < RECORD_BATCH_OVERHEAD) return;
    }
    const at = pos - chunkPos;
    const size = chunk.readInt32BE(at + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    if (size < RECORD_BATCH_OVERHEAD || size > end - pos || chunk.readInt8(at + MAGIC_OFFSET) !== 2) return;
    if (chunk.readBigInt64BE(at) >= endOffset) return;
    if ((chunk.readInt16BE(at + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) !== 0 && at + size > chunkLen) {
      // a transaction marker cut by the chunk: read it whole (markers are a few dozen bytes)
      const whole = Buffer.allocUnsafe(size);
      if ((await file.readInto(whole, 0, size, pos)) < size) return;
      onBatch(whole, 0);
    } else onBatch(chunk, at);
    pos += size;
  }
}

/** File position of the first batch of `segment` whose last offset is >= `offset` (0 for its base offset). */
export async function positionOf(segment: LogSegment, offset: bigint): Promise<number | null> {
  if (offset <= segment.baseOffset) return 0;
  const wasLoaded = segment.indexesLoaded;
  try {
    const found = await segment.translateOffset(offset);
    return found ? found.position : null;
  } finally {
    if (!wasLoaded) segment.releaseIndexes();
  }
}

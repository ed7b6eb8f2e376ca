import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { ATTRIBUTES_OFFSET } from './constants.js';

/** CRC-32C (Castagnoli) of `data`, as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array, initial?: number): number {
  return nativeCrc32c(data, initial) >>> 0;
}

/** The CRC a v2 batch should carry: CRC-32C over attributes..end of the batch. */
export function computeBatchCrc(batch: Buffer): number {
  return crc32c(batch.subarray(ATTRIBUTES_OFFSET));
}

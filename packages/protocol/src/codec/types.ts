/** A tagged field the decoder did not know; kept as raw bytes (a view of the input) so it can be re-emitted. */
export interface TaggedField {
  tag: number;
  data: Buffer;
}

/** The null UUID. Shared: never mutate it. */
export const ZERO_UUID: Buffer = Buffer.alloc(16);

/** An empty buffer. Shared (zero length, so it cannot be mutated). */
export const EMPTY_BUFFER: Buffer = Buffer.alloc(0);

export function isZeroUuid(u: Buffer): boolean {
  if (u.length !== 16) return false;
  for (let i = 0; i < 16; i++) if (u[i] !== 0) return false;
  return true;
}

/** Formats a 16-byte UUID as the base64url string Kafka tools print (e.g. topic ids). */
export function uuidToBase64(u: Buffer): string {
  return u.toString('base64url');
}

/** Parses a Kafka-style base64url UUID string (22 chars) into 16 bytes. */
export function uuidFromBase64(s: string): Buffer {
  const b = Buffer.from(s, 'base64url');
  if (b.length !== 16) throw new TypeError(`not a 16-byte base64url uuid: ${s}`);
  return b;
}

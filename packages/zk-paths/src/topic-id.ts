import { randomBytes } from 'node:crypto';

/** Kafka's Uuid.ZERO_UUID in its string form. */
export const ZERO_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** 16 bytes → Kafka's string form: URL-safe base64 without padding (22 chars). */
export function topicIdToString(bytes: Buffer): string {
  if (bytes.length !== 16) throw new Error(`a topic id is 16 bytes, got ${bytes.length}`);
  return bytes.toString('base64url');
}

export function topicIdFromString(s: string): Buffer {
  const b = Buffer.from(s, 'base64url');
  if (b.length !== 16 || b.toString('base64url') !== s) throw new Error(`malformed topic id ${JSON.stringify(s)}`);
  return b;
}

/** A random id that, as Kafka's Uuid.randomUuid, is never zero and never starts with '-'. */
export function newTopicId(): string {
  for (;;) {
    const b = randomBytes(16);
    // RFC 4122 version 4 / variant bits, as java.util.UUID.randomUUID sets them
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const s = topicIdToString(b);
    if (s !== ZERO_TOPIC_ID && !s.startsWith('-')) return s;
  }
}

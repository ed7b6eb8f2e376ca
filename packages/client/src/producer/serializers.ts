/** Key/value serializers (Kafka's `Serializer<T>`): turn user objects into the bytes that are sent. */
export interface Serializer<T> {
  serialize(topic: string, data: T): Buffer | null;
}

/** Kafka's StringSerializer (UTF-8). */
export const stringSerializer: Serializer<string | null | undefined> = {
  serialize: (_topic, data) => (data === null || data === undefined ? null : Buffer.from(data, 'utf8')),
};

/** Kafka's ByteArraySerializer: bytes pass through uncopied (strings are UTF-8 encoded). */
export const bufferSerializer: Serializer<Buffer | Uint8Array | string | null | undefined> = {
  serialize: (_topic, data) => {
    if (data === null || data === undefined) return null;
    if (typeof data === 'string') return Buffer.from(data, 'utf8');
    return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  },
};

/** Kafka's IntegerSerializer (4 bytes, big-endian). */
export const integerSerializer: Serializer<number | null | undefined> = {
  serialize: (_topic, data) => {
    if (data === null || data === undefined) return null;
    const b = Buffer.allocUnsafe(4);
    b.writeInt32BE(data);
    return b;
  },
};

/** Kafka's LongSerializer (8 bytes, big-endian). */
export const longSerializer: Serializer<bigint | number | null | undefined> = {
  serialize: (_topic, data) => {
    if (data === null || data === undefined) return null;
    const b = Buffer.allocUnsafe(8);
    b.writeBigInt64BE(BigInt(data));
    return b;
  },
};

/**
 * Control-plane framing:
 *
 *   int32 length          bytes that follow (6 + payload length)
 *   int32 correlationId   pairs a response with its request
 *   int16 type            ControlMessageType: says which protobuf message the payload is
 *   bytes payload         protobuf encoding of that message
 *
 * `ControlFrameDecoder` is a streaming decoder for a socket: feed it chunks as they arrive, get back
 * every complete frame; partial frames are buffered. Oversized, undersized or unknown-type frames are
 * rejected with a ControlFrameError as soon as their header is visible, and the decoder then stays
 * failed (the peer is out of sync; close the connection).
 */
import { ControlFrameError } from './errors.js';
import {
  controlMessageTypeName,
  decodeControlBody,
  encodeControlBody,
  isControlMessageType,
  type ControlMessage,
  type ControlMessageBodies,
  type ControlMessageType,
} from './messages.js';

/** Size of correlationId + type. */
export const CONTROL_FRAME_HEADER_BYTES = 6;
/** Default frame limit (like Kafka's socket.request.max.bytes, 100 MiB). */
export const DEFAULT_MAX_CONTROL_FRAME_BYTES = 100 * 1024 * 1024;

export interface ControlFrame {
  correlationId: number;
  type: number;
  /** The protobuf payload (a view into the decoder's buffer). */
  payload: Buffer;
}

/** Encodes one frame (length prefix included). */
export function encodeFrame(frame: ControlFrame): Buffer {
  const out = Buffer.allocUnsafe(4 + CONTROL_FRAME_HEADER_BYTES + frame.payload.length);
  out.writeInt32BE(CONTROL_FRAME_HEADER_BYTES + frame.payload.length, 0);
  out.writeInt32BE(frame.correlationId, 4);
  out.writeInt16BE(frame.type, 8);
  frame.payload.copy(out, 10);
  return out;
}

/** Encodes a typed control message as a complete frame. */
export function encodeControlMessage<T extends ControlMessageType>(correlationId: number, type: T, body: ControlMessageBodies[T]): Buffer {
  return encodeFrame({ correlationId, type, payload: encodeControlBody(type, body) });
}

/** Decodes the payload of a frame into a typed message. Throws ControlFrameError on unknown type / bad payload. */
export function decodeControlMessage(frame: ControlFrame): ControlMessage {
  if (!isControlMessageType(frame.type)) {
    throw new ControlFrameError('unknown-type', `Unknown control message type ${frame.type}`);
  }
  return { type: frame.type, body: decodeControlBody(frame.type, frame.payload) } as ControlMessage;
}

export interface ControlFrameDecoderOptions {
  /** Largest accepted frame (the length field). Default 100 MiB. */
  maxFrameBytes?: number;
  /** Accept only these type values (default: every ControlMessageType). */
  isKnownType?: (type: number) => boolean;
}

export class ControlFrameDecoder {
  private readonly maxFrameBytes: number;
  private readonly isKnownType: (type: number) => boolean;
  /** Unconsumed input, kept as a chunk list so a large frame arriving in pieces is copied once. */
  private chunks: Buffer[] = [];
  private total = 0;
  /** Bytes needed before parsing can make progress. */
  private need = 4;
  private failure: ControlFrameError | null = null;

  constructor(options: ControlFrameDecoderOptions = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_CONTROL_FRAME_BYTES;
    this.isKnownType = options.isKnownType ?? isControlMessageType;
  }

  /** Bytes received but not yet returned as a frame. */
  get buffered(): number {
    return this.total;
  }

  get failed(): boolean {
    return this.failure !== null;
  }

  /** Feeds a chunk; returns the frames it completed (possibly none, possibly several). */
  push(chunk: Uint8Array): ControlFrame[] {
    if (this.failure) throw new ControlFrameError('failed', `Control frame decoder already failed: ${this.failure.message}`);
    if (chunk.length === 0) return [];
    const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.chunks.push(data);
    this.total += data.length;
    if (this.total < this.need) return [];
    const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.total);
    const frames: ControlFrame[] = [];
    try {
      let pos = 0;
      let need = 4;
      for (;;) {
        const remaining = buf.length - pos;
        if (remaining < 4) {
          need = 4;
          break;
        }
        const length = buf.readInt32BE(pos);
        if (length < CONTROL_FRAME_HEADER_BYTES) {
          throw new ControlFrameError('too-small', `Control frame length ${length} is below the ${CONTROL_FRAME_HEADER_BYTES}-byte header`);
        }
        if (length > this.maxFrameBytes) {
          throw new ControlFrameError('too-large', `Control frame of ${length} bytes exceeds the limit of ${this.maxFrameBytes}`);
        }
        if (remaining < 10) {
          need = 10;
          break;
        }
        const type = buf.readInt16BE(pos + 8);
        if (!this.isKnownType(type)) {
          throw new ControlFrameError('unknown-type', `Unknown control message type ${type} (${controlMessageTypeName(type)})`);
        }
        if (remaining < 4 + length) {
          need = 4 + length;
          break;
        }
        frames.push({ correlationId: buf.readInt32BE(pos + 4), type, payload: buf.subarray(pos + 10, pos + 4 + length) });
        pos += 4 + length;
      }
      const tail = buf.subarray(pos);
      this.chunks = tail.length === 0 ? [] : [tail];
      this.total = tail.length;
      this.need = need;
    } catch (e) {
      this.failure = e as ControlFrameError;
      this.chunks = [];
      this.total = 0;
      throw e;
    }
    return frames;
  }

  /** Call when the stream ends: throws ControlFrameError('truncated') if a partial frame is pending. */
  end(): void {
    if (this.failure) return;
    if (this.total > 0) {
      const n = this.total;
      this.chunks = [];
      this.total = 0;
      this.failure = new ControlFrameError('truncated', `Control stream ended inside a frame (${n} bytes pending)`);
      throw this.failure;
    }
  }
}

import { KafkaError } from '../errors.js';

export type ControlFrameErrorReason =
  /** The length prefix is below the 6-byte frame header. */
  | 'too-small'
  /** The length prefix exceeds the decoder's maxFrameBytes. */
  | 'too-large'
  /** The type field is not a known ControlMessageType. */
  | 'unknown-type'
  /** The protobuf payload does not decode as its declared type. */
  | 'bad-payload'
  /** The stream ended in the middle of a frame. */
  | 'truncated'
  /** The decoder already failed; the connection should be closed. */
  | 'failed';

/** A malformed control-plane frame. Maps to INVALID_REQUEST (42) through errorCodeOf(). */
export class ControlFrameError extends KafkaError {
  readonly reason: ControlFrameErrorReason;

  constructor(reason: ControlFrameErrorReason, message: string, options?: { cause?: unknown }) {
    super(42, message, options);
    this.name = 'ControlFrameError';
    this.reason = reason;
  }
}

/**
 * Thrown by every decoder in this package when the input is truncated or malformed.
 * `offset` is the absolute position in the decoded buffer where the problem was found.
 */
export class ProtocolDecodeError extends Error {
  override readonly name = 'ProtocolDecodeError';
  readonly offset: number;
  /** Short description of what was being decoded (without the offset). */
  readonly reason: string;

  constructor(reason: string, offset: number, options?: { cause?: unknown }) {
    super(`${reason} at offset ${offset}`, options);
    this.reason = reason;
    this.offset = offset;
  }

  /** A copy of this error whose message is prefixed with `context` (e.g. "ProduceRequest v9"). */
  withContext(context: string): ProtocolDecodeError {
    const e = new ProtocolDecodeError(`${context}: ${this.reason}`, this.offset, { cause: this });
    return e;
  }
}

/**
 * Thrown by encoders when a value cannot be represented at the requested version
 * (null in a non-nullable field, a non-default value in a field the version lacks, an oversized string, ...).
 */
export class ProtocolEncodeError extends Error {
  override readonly name = 'ProtocolEncodeError';
}

/** `x ?? nullNotAllowed(...)`: throws when a non-nullable field (at this version) holds null. */
export function nullNotAllowed(field: string, version: number): never {
  throw new ProtocolEncodeError(`${field} is null, but it is not nullable in version ${version}`);
}

/** Thrown when a non-ignorable field with a non-default value cannot be written at this version. */
export function fieldNotSupported(field: string, version: number): never {
  throw new ProtocolEncodeError(`${field} has a non-default value, but version ${version} cannot carry it`);
}

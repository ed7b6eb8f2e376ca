/** ZooKeeper result codes (as the server sends them). */
export const ZkCode = {
  OK: 0,
  SYSTEM_ERROR: -1,
  RUNTIME_INCONSISTENCY: -2,
  DATA_INCONSISTENCY: -3,
  CONNECTION_LOSS: -4,
  MARSHALLING_ERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATION_TIMEOUT: -7,
  BAD_ARGUMENTS: -8,
  API_ERROR: -100,
  NO_NODE: -101,
  NO_AUTH: -102,
  BAD_VERSION: -103,
  NO_CHILDREN_FOR_EPHEMERALS: -108,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  INVALID_CALLBACK: -113,
  INVALID_ACL: -114,
  AUTH_FAILED: -115,
  /** Ours: the ZkClient declared the session lost (liveness timer or server-reported expiry). */
  SESSION_LOST: -9001,
  /** Ours: the ZkClient was closed. */
  CLIENT_CLOSED: -9002,
} as const;
export type ZkCode = (typeof ZkCode)[keyof typeof ZkCode];

const codeNames = new Map<number, string>(Object.entries(ZkCode).map(([k, v]) => [v, k]));
export function zkCodeName(code: number): string {
  return codeNames.get(code) ?? `ZK_ERROR_${code}`;
}

/** A failed ZooKeeper operation: the code and the path it concerned. */
export class ZkError extends Error {
  readonly codeName: string;
  constructor(
    readonly code: number,
    readonly path: string | undefined,
    message?: string,
    options?: { cause?: unknown },
  ) {
    super(message ?? `${zkCodeName(code)}${path ? ` at ${path}` : ''}`, options);
    this.name = 'ZkError';
    this.codeName = zkCodeName(code);
  }

  is(code: ZkCode): boolean {
    return this.code === code;
  }
}

/** A multi (transaction) failed; `failedIndex` is the first op with a non-OK result. */
export class ZkMultiError extends ZkError {
  constructor(
    code: number,
    readonly failedIndex: number,
    readonly opCodes: number[],
    path: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(code, path, `multi failed at op ${failedIndex}: ${zkCodeName(code)}${path ? ` at ${path}` : ''}`, options);
    this.name = 'ZkMultiError';
  }
}

/** The controller epoch znode's zkVersion moved: another controller has been elected. */
export class ControllerMovedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ControllerMovedError';
  }
}

/** A znode's payload could not be decoded. */
export class ZNodeDecodeError extends Error {
  constructor(
    readonly path: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot decode znode ${path}: ${reason}`, options);
    this.name = 'ZNodeDecodeError';
  }
}

export function isZkError(e: unknown, code?: ZkCode): e is ZkError {
  return e instanceof ZkError && (code === undefined || e.code === code);
}

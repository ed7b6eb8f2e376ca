import { ControllerEpochZNode } from './znodes.js';
import type { ZkOp, ZkOpResult } from './zk-client.js';
import type { ZkClientApi } from './zk-api.js';
import { ControllerMovedError, ZkMultiError } from './zk-errors.js';

/**
 * Every controller write goes through here: `multi[check(/controller_epoch, epochZkVersion), ...ops]`.
 * If another controller has bumped the epoch since we were elected, the check fails and nothing is
 * written: ControllerMovedError. Failures of the caller's own ops surface as ZkMultiError with
 * `failedIndex` relative to `ops`.
 */
export async function controllerFencedMulti(zk: ZkClientApi, epochZkVersion: number, ops: ZkOp[]): Promise<ZkOpResult[]> {
  try {
    const results = await zk.multi([{ type: 'check', path: ControllerEpochZNode.path, version: epochZkVersion }, ...ops]);
    return results.slice(1);
  } catch (err) {
    if (err instanceof ZkMultiError) {
      if (err.failedIndex === 0) {
        throw new ControllerMovedError(
          `controller epoch zkVersion is no longer ${epochZkVersion} (${err.codeName}): another controller was elected`,
          { cause: err },
        );
      }
      throw new ZkMultiError(err.code, err.failedIndex - 1, err.opCodes.slice(1), err.path, { cause: err });
    }
    throw err;
  }
}


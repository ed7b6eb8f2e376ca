import { ControllerEpochZNode } from './znodes.js';
import { deleteTree, type ZkOp, type ZkOpResult } from './zk-client.js';
import type { ZkClientApi } from './zk-api.js';
import { ControllerMovedError, ZkCode, ZkMultiError } from './zk-errors.js';

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
        throw new ControllerMovedError(`controller epoch zkVersion is no longer ${epochZkVersion} (${err.codeName}): another controller was elected`, {
          cause: err,
        });
      }
      throw new ZkMultiError(err.code, err.failedIndex - 1, err.opCodes.slice(1), err.path, { cause: err });
    }
    throw err;
  }
}

/**
 * Deletes `path` if it exists, fenced by the controller epoch (Kafka's deletePath with
 * expectedControllerEpochZkVersion). A missing node is not an error; a moved controller is.
 */
export async function controllerFencedDelete(zk: ZkClientApi, epochZkVersion: number, path: string): Promise<void> {
  try {
    await controllerFencedMulti(zk, epochZkVersion, [{ type: 'delete', path }]);
  } catch (err) {
    if (err instanceof ZkMultiError && err.code === ZkCode.NO_NODE) return;
    throw err;
  }
}

/** Deletes `path` and everything below it, children first, each delete fenced by the controller epoch. */
export function controllerFencedDeleteRecursive(zk: ZkClientApi, epochZkVersion: number, path: string): Promise<void> {
  return deleteTree(zk, path, (p) => controllerFencedDelete(zk, epochZkVersion, p));
}

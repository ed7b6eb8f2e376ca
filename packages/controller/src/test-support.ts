/** Test support for the controller's unit tests. */
import type { BrokerInfo } from '@samsa/zk-paths';

/** A registered broker with a CONTROLLER endpoint on 127.0.0.1:19092+id (and `epoch`, when given). */
export function testBroker(id: number, epoch?: bigint): BrokerInfo {
  return {
    id,
    endpoints: [{ listenerName: 'CONTROLLER', host: '127.0.0.1', port: 19092 + id, securityProtocol: 'PLAINTEXT' }],
    rack: null,
    jmxPort: -1,
    timestamp: '0',
    features: {},
    version: 5,
    ...(epoch !== undefined ? { epoch } : {}),
  };
}

/** Test support for the controller's unit tests. */
import type { BrokerInfo } from '@samsa/zk-paths';
import type { BrokerChannel, ControlRequest, ControlResponse } from './requests.js';

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

/** Records what the controller sends instead of talking to brokers. */
export class RecordingChannel implements BrokerChannel {
  readonly sent: Array<{ brokerId: number; request: ControlRequest }> = [];
  readonly brokers = new Set<number>();
  addBroker(b: BrokerInfo) {
    this.brokers.add(b.id);
  }
  removeBroker(id: number) {
    this.brokers.delete(id);
  }
  /** Brokers that answer StopReplica with an error (to test retries). */
  readonly failing = new Set<number>();
  send(brokerId: number, request: ControlRequest, onResponse?: (r: ControlResponse) => void) {
    this.sent.push({ brokerId, request });
    if (request.kind === 'StopReplica' && onResponse) {
      const errorCode = this.failing.has(brokerId) ? 56 : 0;
      setImmediate(() => onResponse({ errorCode: 0, partitionErrors: request.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode })) }));
    } else if (onResponse) {
      setImmediate(() => onResponse({ errorCode: 0, partitionErrors: [] }));
    }
  }
  async close() {}
}

/** Polls `f` every 25 ms until it returns a truthy value. */
export async function until<T>(f: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

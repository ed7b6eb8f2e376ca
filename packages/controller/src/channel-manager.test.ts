import { createServer, type Server, type Socket } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlFrameDecoder, ControlMessageType, decodeControlMessage, encodeControlMessage } from '@samsa/protocol';
import type { BrokerInfo } from '@samsa/zk-paths';
import { ControllerChannelManager, MAX_IN_FLIGHT_CONTROL_REQUESTS } from './channel-manager.js';
import type { ControlResponse, UpdateMetadataRequest } from './requests.js';

/** A broker's control-plane listener that records requests and answers only when told to. */
class FakeControlPlane {
  readonly received: Array<{ controllerEpoch: number; correlationId: number; socket: Socket }> = [];
  readonly connections: Socket[] = [];
  private waiters: Array<() => void> = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((s) => {
      this.connections.push(s);
      const decoder = new ControlFrameDecoder();
      s.on('data', (d) => {
        for (const f of decoder.push(d)) {
          const m = decodeControlMessage(f);
          if (m.type !== ControlMessageType.UPDATE_METADATA_REQUEST) throw new Error(`unexpected ${m.type}`);
          this.received.push({ controllerEpoch: m.body.controllerEpoch, correlationId: f.correlationId, socket: s });
        }
        for (const w of this.waiters.splice(0)) w();
      });
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Resolves once `n` requests have arrived in all. */
  async untilReceived(n: number): Promise<void> {
    while (this.received.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }

  answer(i: number): void {
    const r = this.received[i]!;
    r.socket.write(encodeControlMessage(r.correlationId, ControlMessageType.UPDATE_METADATA_RESPONSE, { errorCode: 0 }));
  }

  async stop(): Promise<void> {
    for (const s of this.connections) s.destroy();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

function broker(port: number): BrokerInfo {
  return {
    id: 1,
    endpoints: [{ listenerName: 'CONTROLLER', host: '127.0.0.1', port, securityProtocol: 'PLAINTEXT' }],
    rack: null,
    jmxPort: -1,
    timestamp: '0',
    features: {},
    version: 5,
  };
}

/** An UpdateMetadata told apart from the others by its controller epoch. */
function updateMetadata(n: number): UpdateMetadataRequest {
  return { kind: 'UpdateMetadata', controllerId: 0, controllerEpoch: n, brokerEpoch: 1n, partitions: [], liveBrokers: [] };
}

describe('controller channel', () => {
  let plane: FakeControlPlane;
  let channel: ControllerChannelManager;
  afterEach(async () => {
    await channel?.close();
    await plane?.stop();
  });

  async function setUp(): Promise<void> {
    plane = new FakeControlPlane();
    await plane.start();
    channel = new ControllerChannelManager({ listenerName: 'CONTROLLER', logger: pino({ level: 'silent' }), retryBackoffMs: 10 });
    channel.addBroker(broker(plane.port));
  }

  it('controller channel – requests to a broker are written before the first is answered, and answered in order', async () => {
    await setUp();
    const answered: number[] = [];
    const count = MAX_IN_FLIGHT_CONTROL_REQUESTS + 2;
    const done = Array.from(
      { length: count },
      (_, n) => new Promise<ControlResponse>((r) => channel.send(1, updateMetadata(n), (res) => (answered.push(n), r(res)))),
    );
    // the window is written at once; nothing more until an answer
    await plane.untilReceived(MAX_IN_FLIGHT_CONTROL_REQUESTS);
    await new Promise((r) => setTimeout(r, 50));
    expect(plane.received.map((x) => x.controllerEpoch)).toEqual([...Array(MAX_IN_FLIGHT_CONTROL_REQUESTS).keys()]);
    plane.answer(0);
    await plane.untilReceived(MAX_IN_FLIGHT_CONTROL_REQUESTS + 1);
    for (let i = 1; i < count; i++) {
      await plane.untilReceived(Math.min(count, i + MAX_IN_FLIGHT_CONTROL_REQUESTS));
      plane.answer(i);
    }
    await Promise.all(done);
    expect(answered).toEqual([...Array(count).keys()]);
    expect(plane.received.map((x) => x.controllerEpoch)).toEqual([...Array(count).keys()]);
  });

  it('controller channel – unanswered requests are resent in order on a new connection after the old one drops', async () => {
    await setUp();
    const answered: number[] = [];
    const done = [0, 1, 2].map((n) => new Promise<void>((r) => channel.send(1, updateMetadata(n), () => (answered.push(n), r()))));
    await plane.untilReceived(3);
    plane.answer(0);
    // the broker goes away with requests 1 and 2 unanswered
    await done[0];
    plane.connections[0]!.destroy();
    await plane.untilReceived(5);
    expect(plane.received.slice(3).map((x) => [x.controllerEpoch, x.socket === plane.connections[1]])).toEqual([
      [1, true],
      [2, true],
    ]);
    plane.answer(3);
    plane.answer(4);
    await Promise.all(done);
    expect(answered).toEqual([0, 1, 2]);
  });

  it('controller channel – an answer that is not for the oldest request is ignored', async () => {
    await setUp();
    const answered: number[] = [];
    const done = [0, 1].map((n) => new Promise<void>((r) => channel.send(1, updateMetadata(n), () => (answered.push(n), r()))));
    await plane.untilReceived(2);
    // written in this order on one connection, so the stray answer is read before request 0's
    plane.answer(1);
    plane.answer(0);
    await done[0];
    expect(answered).toEqual([0]);
    // the early answer for request 1 was dropped: it is still waiting, and a removal drops it
    const dropped = new Promise<void>((r) => channel.send(1, updateMetadata(9), undefined, r));
    channel.removeBroker(1);
    await dropped;
    expect(answered).toEqual([0]);
    void done[1];
  });
});

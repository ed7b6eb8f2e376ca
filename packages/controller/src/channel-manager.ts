import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import {
  ControlFrameDecoder,
  ControlMessageType,
  LeaderAndIsrType,
  decodeControlMessage,
  encodeControlMessage,
  type Broker,
  type ControlMessage,
} from '@samsa/protocol';
import type { BrokerInfo } from '@samsa/zk-paths';
import type { BrokerChannel, ControlRequest, ControlResponse } from './requests.js';

export interface ChannelManagerOptions {
  /** control.plane.listener.name: the listener brokers serve control requests on. */
  listenerName: string;
  logger: Logger;
  /** controller.socket.timeout.ms: per-request timeout before the connection is reset and the request resent. */
  requestTimeoutMs?: number;
  retryBackoffMs?: number;
  /**
   * Client-side TLS options for brokers whose registered control-plane endpoint is SSL or SASL_SSL
   * (the broker builds them from the listener's ssl.* settings); other endpoints are plaintext.
   */
  tls?: ConnectionOptions;
}

export function toProtoBroker(b: BrokerInfo): Broker {
  return {
    brokerId: b.id,
    endpoints: b.endpoints.map((e) => ({ listener: e.listenerName, host: e.host, port: e.port, securityProtocol: e.securityProtocol })),
    rack: b.rack,
  };
}

/** Encodes a controller request as a control-plane frame. */
export function encodeControlRequest(correlationId: number, r: ControlRequest): Buffer {
  switch (r.kind) {
    case 'LeaderAndIsr':
      return encodeControlMessage(correlationId, ControlMessageType.LEADER_AND_ISR_REQUEST, {
        controllerId: r.controllerId,
        controllerEpoch: r.controllerEpoch,
        brokerEpoch: r.brokerEpoch,
        type: r.full ? LeaderAndIsrType.FULL : LeaderAndIsrType.INCREMENTAL,
        partitionStates: r.partitions,
        liveLeaders: r.liveLeaders.map(toProtoBroker),
      });
    case 'UpdateMetadata':
      return encodeControlMessage(correlationId, ControlMessageType.UPDATE_METADATA_REQUEST, {
        controllerId: r.controllerId,
        controllerEpoch: r.controllerEpoch,
        brokerEpoch: r.brokerEpoch,
        partitionStates: r.partitions,
        liveBrokers: r.liveBrokers.map(toProtoBroker),
      });
    case 'StopReplica':
      return encodeControlMessage(correlationId, ControlMessageType.STOP_REPLICA_REQUEST, {
        controllerId: r.controllerId,
        controllerEpoch: r.controllerEpoch,
        brokerEpoch: r.brokerEpoch,
        partitions: r.partitions,
      });
    default: {
      const never: never = r;
      throw new Error(`unknown control request ${JSON.stringify(never)}`);
    }
  }
}

function toResponse(m: ControlMessage): ControlResponse {
  switch (m.type) {
    case ControlMessageType.LEADER_AND_ISR_RESPONSE:
    case ControlMessageType.STOP_REPLICA_RESPONSE:
      return {
        errorCode: m.body.errorCode,
        partitionErrors: m.body.partitionErrors.map((e) => ({ topic: e.topic, partition: e.partition, errorCode: e.errorCode })),
      };
    case ControlMessageType.UPDATE_METADATA_RESPONSE:
    case ControlMessageType.ERROR_RESPONSE:
      return { errorCode: m.body.errorCode, partitionErrors: [] };
    default:
      return { errorCode: -1, partitionErrors: [] };
  }
}

interface Pending {
  request: ControlRequest;
  onResponse: ((r: ControlResponse) => void) | undefined;
  onDropped: (() => void) | undefined;
}

/** Control requests written to one broker before the first is answered (the broker answers them in order). */
export const MAX_IN_FLIGHT_CONTROL_REQUESTS = 4;

/**
 * One queue per broker (Kafka's RequestSendThread): requests go out in order and are resent after a
 * connection failure or timeout until they succeed or the broker is removed. Unlike Kafka's one
 * request at a time, up to MAX_IN_FLIGHT_CONTROL_REQUESTS are written ahead: the broker processes a
 * connection's requests one at a time, in order, so an UpdateMetadata queued behind a LeaderAndIsr
 * reaches the broker while the LeaderAndIsr is applied instead of one round trip after its answer.
 * The timeout runs for the oldest unanswered request, from when it is the oldest.
 */
class BrokerQueue {
  /** Unanswered requests, oldest first; the first `inFlight.length` of them are written. */
  private readonly queue: Pending[] = [];
  private socket: Socket | undefined;
  private decoder = new ControlFrameDecoder();
  private readonly inFlight: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private correlationId = 0;
  private closed = false;
  private connecting = false;
  private backoff: NodeJS.Timeout | undefined;

  constructor(
    readonly brokerId: number,
    private readonly host: string,
    private readonly port: number,
    private readonly o: Required<Omit<ChannelManagerOptions, 'logger' | 'listenerName' | 'tls'>>,
    private readonly log: Logger,
    /** Connect with TLS (the endpoint's security protocol is SSL / SASL_SSL). */
    private readonly tls?: ConnectionOptions,
  ) {}

  push(p: Pending): void {
    this.queue.push(p);
    this.pump();
  }

  private pump(): void {
    if (this.closed || this.backoff || this.inFlight.length === this.queue.length) return;
    if (!this.socket) {
      this.connect();
      return;
    }
    if (this.connecting) return;
    const socket = this.socket;
    const wasIdle = this.inFlight.length === 0;
    while (this.inFlight.length < Math.min(this.queue.length, MAX_IN_FLIGHT_CONTROL_REQUESTS)) {
      const p = this.queue[this.inFlight.length]!;
      const correlationId = ++this.correlationId;
      this.inFlight.push(correlationId);
      socket.write(encodeControlRequest(correlationId, p.request));
    }
    if (wasIdle) this.armTimer();
  }

  /** The timeout of the oldest unanswered request (none when nothing is in flight). */
  private armTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight.length === 0) return;
    this.timer = setTimeout(() => this.fail(new Error(`no answer from broker ${this.brokerId} within ${this.o.requestTimeoutMs} ms`)), this.o.requestTimeoutMs);
  }

  private connect(): void {
    this.connecting = true;
    this.decoder = new ControlFrameDecoder();
    const tls = this.tls;
    const s = tls ? tlsConnect({ ...tls, host: this.host, port: this.port }).setNoDelay(true) : connect({ host: this.host, port: this.port, noDelay: true });
    this.socket = s;
    s.on(tls ? 'secureConnect' : 'connect', () => {
      this.connecting = false;
      this.pump();
    });
    s.on('data', (d: Buffer) => {
      let frames;
      try {
        frames = this.decoder.push(d);
      } catch (err) {
        this.fail(err as Error);
        return;
      }
      for (const f of frames) {
        if (this.socket !== s) return;
        this.onFrame(f.correlationId, decodeControlMessage(f));
      }
    });
    s.on('error', (err) => this.fail(err));
    s.on('close', () => {
      if (this.socket === s) this.fail(new Error('connection closed'));
    });
  }

  private onFrame(correlationId: number, m: ControlMessage): void {
    // answers come in request order; anything else is not an answer to the oldest request
    if (this.inFlight[0] !== correlationId) return;
    this.inFlight.shift();
    const p = this.queue.shift()!;
    this.armTimer();
    p.onResponse?.(toResponse(m));
    this.pump();
  }

  /** Drops the connection; the unanswered requests stay queued, in order, and are resent. */
  private fail(err: Error): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight.length = 0;
    const s = this.socket;
    this.socket = undefined;
    this.connecting = false;
    s?.destroy();
    if (this.closed) return;
    this.log.warn({ broker: this.brokerId, err: err.message }, 'control request to broker failed; retrying');
    this.backoff = setTimeout(() => {
      this.backoff = undefined;
      this.pump();
    }, this.o.retryBackoffMs);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.backoff);
    clearTimeout(this.timer);
    this.inFlight.length = 0;
    const dropped = this.queue.splice(0);
    this.socket?.destroy();
    for (const p of dropped) p.onDropped?.();
    this.socket = undefined;
  }
}

/** The controller's connections to every live broker's control-plane listener. */
export class ControllerChannelManager implements BrokerChannel {
  private readonly queues = new Map<number, BrokerQueue>();
  private readonly log: Logger;

  constructor(private readonly o: ChannelManagerOptions) {
    this.log = o.logger.child({ component: 'controller-channel' });
  }

  addBroker(b: BrokerInfo): void {
    if (this.queues.has(b.id)) return;
    const e = b.endpoints.find((x) => x.listenerName === this.o.listenerName) ?? b.endpoints[0];
    if (!e) {
      this.log.error({ broker: b.id }, 'broker registered without endpoints; cannot send control requests');
      return;
    }
    const host = e.host === '' || e.host === '0.0.0.0' ? '127.0.0.1' : e.host;
    const tls = e.securityProtocol === 'SSL' || e.securityProtocol === 'SASL_SSL' ? (this.o.tls ?? {}) : undefined;
    this.queues.set(
      b.id,
      new BrokerQueue(b.id, host, e.port, { requestTimeoutMs: this.o.requestTimeoutMs ?? 30_000, retryBackoffMs: this.o.retryBackoffMs ?? 100 }, this.log, tls),
    );
  }

  removeBroker(id: number): void {
    this.queues.get(id)?.close();
    this.queues.delete(id);
  }

  send(brokerId: number, request: ControlRequest, onResponse?: (r: ControlResponse) => void, onDropped?: () => void): void {
    const q = this.queues.get(brokerId);
    if (!q) {
      this.log.warn({ broker: brokerId, request: request.kind }, 'no channel to broker; request dropped');
      onDropped?.();
      return;
    }
    q.push({ request, onResponse, onDropped });
  }

  async close(): Promise<void> {
    for (const q of this.queues.values()) q.close();
    this.queues.clear();
  }
}

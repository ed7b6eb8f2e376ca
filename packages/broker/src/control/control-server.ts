import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { Logger } from 'pino';
import {
  ControlFrameDecoder,
  ControlMessageType,
  decodeControlMessage,
  encodeControlMessage,
  errorCodeOf,
  type ControlMessage,
  type ControlMessageBodies,
  type ControlledShutdownRequest,
  type LeaderAndIsrRequest,
  type StopReplicaRequest,
  type UpdateMetadataRequest,
} from '@samsa/protocol';
import type { ServerTls } from '../security/ssl-factory.js';

/** What the broker does with each control request. Throwing KafkaError answers with its code. */
export interface ControlRequestHandler {
  leaderAndIsr(r: LeaderAndIsrRequest): Promise<ControlMessageBodies[typeof ControlMessageType.LEADER_AND_ISR_RESPONSE]>;
  updateMetadata(r: UpdateMetadataRequest): Promise<ControlMessageBodies[typeof ControlMessageType.UPDATE_METADATA_RESPONSE]>;
  stopReplica(r: StopReplicaRequest): Promise<ControlMessageBodies[typeof ControlMessageType.STOP_REPLICA_RESPONSE]>;
  /** Served by the active controller only. */
  controlledShutdown(r: ControlledShutdownRequest): Promise<ControlMessageBodies[typeof ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE]>;
}

/**
 * The CONTROLLER listener (Kafka's KIP-291 control plane): length-prefixed protobuf frames from the
 * controller, processed in order per connection. Garbage closes the connection; a request the
 * broker cannot process gets an ERROR_RESPONSE; the broker keeps serving.
 */
export class ControlPlaneServer {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  boundPort = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly handler: ControlRequestHandler,
    private readonly log: Logger,
    /** The listener's TLS server context when its security protocol is SSL. */
    private readonly tls?: ServerTls,
  ) {}

  async start(): Promise<number> {
    const tls = this.tls;
    const server = tls
      ? createTlsServer({ ...tls.options, noDelay: true, handshakeTimeout: 10_000 }, (s) => this.accept(s))
      : createServer({ noDelay: true }, (s) => this.accept(s));
    if (tls) {
      server.on('tlsClientError', (err, s) => {
        this.log.info({ listener: 'control-plane', remote: `${s.remoteAddress}:${s.remotePort}`, err: err.message }, 'TLS handshake failed; connection closed');
        // Node leaves the socket open after some failures (a handshake timeout)
        s.destroy();
      });
    }
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host || undefined, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const a = server.address();
    this.boundPort = a && typeof a === 'object' ? a.port : this.port;
    this.log.info({ listener: 'control-plane', port: this.boundPort }, 'listening');
    return this.boundPort;
  }

  private accept(s: Socket): void {
    this.sockets.add(s);
    const decoder = new ControlFrameDecoder();
    let chain = Promise.resolve();
    s.on('data', (d: Buffer) => {
      let frames;
      try {
        frames = decoder.push(d);
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'malformed control frame; closing connection');
        s.destroy();
        return;
      }
      for (const f of frames) {
        chain = chain.then(async () => {
          const reply = await this.process(f.correlationId, () => decodeControlMessage(f));
          if (!s.destroyed) s.write(reply);
        });
      }
    });
    s.on('error', () => undefined);
    s.on('close', () => this.sockets.delete(s));
  }

  private async process(correlationId: number, decode: () => ControlMessage): Promise<Buffer> {
    let m: ControlMessage;
    try {
      m = decode();
    } catch (err) {
      return encodeControlMessage(correlationId, ControlMessageType.ERROR_RESPONSE, {
        errorCode: 42,
        message: `undecodable control request: ${(err as Error).message}`,
      });
    }
    try {
      switch (m.type) {
        case ControlMessageType.LEADER_AND_ISR_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.LEADER_AND_ISR_RESPONSE, await this.handler.leaderAndIsr(m.body));
        case ControlMessageType.UPDATE_METADATA_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.UPDATE_METADATA_RESPONSE, await this.handler.updateMetadata(m.body));
        case ControlMessageType.STOP_REPLICA_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.STOP_REPLICA_RESPONSE, await this.handler.stopReplica(m.body));
        case ControlMessageType.CONTROLLED_SHUTDOWN_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE, await this.handler.controlledShutdown(m.body));
        default:
          return encodeControlMessage(correlationId, ControlMessageType.ERROR_RESPONSE, {
            errorCode: 42,
            message: `control message type ${m.type} is not a request`,
          });
      }
    } catch (err) {
      const code = errorCodeOf(err);
      if (code === -1) this.log.error({ err, type: m.type }, 'control request failed');
      const bodyError = { errorCode: code };
      switch (m.type) {
        case ControlMessageType.LEADER_AND_ISR_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.LEADER_AND_ISR_RESPONSE, { ...bodyError, partitionErrors: [] });
        case ControlMessageType.UPDATE_METADATA_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.UPDATE_METADATA_RESPONSE, bodyError);
        case ControlMessageType.STOP_REPLICA_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.STOP_REPLICA_RESPONSE, { ...bodyError, partitionErrors: [] });
        case ControlMessageType.CONTROLLED_SHUTDOWN_REQUEST:
          return encodeControlMessage(correlationId, ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE, { ...bodyError, remainingPartitions: [] });
        default:
          return encodeControlMessage(correlationId, ControlMessageType.ERROR_RESPONSE, { errorCode: code, message: (err as Error).message });
      }
    }
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}

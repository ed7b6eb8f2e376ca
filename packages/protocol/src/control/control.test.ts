import fc from 'fast-check';
import { createRequire } from 'node:module';
import type protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { errorCodeOf } from '../errors.js';
import {
  ControlFrameDecoder,
  ControlFrameError,
  ControlMessageType,
  LeaderAndIsrType,
  CONTROL_PROTO_PATH,
  controlMessageTypeName,
  decodeControlMessage,
  encodeControlBody,
  encodeControlMessage,
  encodeFrame,
  type ControlFrame,
  type ControlMessage,
  type PartitionState,
} from './index.js';

function partitionState(over: Partial<PartitionState> = {}): PartitionState {
  return {
    topic: 'orders',
    topicId: 'q1w2e3r4t5y6u7i8o9p0aA',
    partition: 3,
    controllerEpoch: 7,
    leader: 2,
    leaderEpoch: 11,
    isr: [2, 1],
    zkVersion: 5,
    replicas: [1, 2, 3],
    addingReplicas: [3],
    removingReplicas: [],
    isNew: true,
    offlineReplicas: [],
    leaderRecoveryState: 0,
    ...over,
  };
}

const broker = (id: number, rack: string | null = null) => ({
  brokerId: id,
  endpoints: [
    { listener: 'PLAINTEXT', host: `broker-${id}`, port: 9092 + id, securityProtocol: 'PLAINTEXT' },
    { listener: 'CONTROLLER', host: `broker-${id}`, port: 19092 + id, securityProtocol: 'PLAINTEXT' },
  ],
  rack,
});

const samples: ControlMessage[] = [
  {
    type: ControlMessageType.LEADER_AND_ISR_REQUEST,
    body: {
      controllerId: 1,
      controllerEpoch: 7,
      brokerEpoch: 0x1_0000_0000_0042n,
      type: LeaderAndIsrType.FULL,
      partitionStates: [partitionState(), partitionState({ partition: 4, leader: -1, isr: [], isNew: false })],
      liveLeaders: [broker(2, 'rack-a')],
    },
  },
  {
    type: ControlMessageType.LEADER_AND_ISR_RESPONSE,
    body: { errorCode: 0, partitionErrors: [{ topic: 'orders', topicId: '', partition: 3, errorCode: 74 }] },
  },
  {
    type: ControlMessageType.UPDATE_METADATA_REQUEST,
    body: {
      controllerId: 1,
      controllerEpoch: 7,
      brokerEpoch: -1n,
      partitionStates: [partitionState({ offlineReplicas: [3] })],
      liveBrokers: [broker(1), broker(2, 'rack-b'), broker(3, '')],
    },
  },
  { type: ControlMessageType.UPDATE_METADATA_RESPONSE, body: { errorCode: 77 } },
  {
    type: ControlMessageType.STOP_REPLICA_REQUEST,
    body: {
      controllerId: 1,
      controllerEpoch: 7,
      brokerEpoch: 99n,
      partitions: [
        { topic: 'orders', partition: 0, deletePartition: true, leaderEpoch: -2 },
        { topic: 'orders', partition: 1, deletePartition: false, leaderEpoch: 4 },
      ],
    },
  },
  {
    type: ControlMessageType.STOP_REPLICA_RESPONSE,
    body: { errorCode: 0, partitionErrors: [{ topic: 'orders', topicId: '', partition: 1, errorCode: 0 }] },
  },
  { type: ControlMessageType.CONTROLLED_SHUTDOWN_REQUEST, body: { brokerId: 3, brokerEpoch: 1234567890123n } },
  {
    type: ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE,
    body: { errorCode: 0, remainingPartitions: [{ topic: 'orders', partition: 2 }] },
  },
  { type: ControlMessageType.ERROR_RESPONSE, body: { errorCode: 35, message: 'no such control message' } },
];

const encodeSample = (m: ControlMessage, correlationId: number): Buffer => encodeControlMessage(correlationId, m.type, m.body as never);

describe('control – messages', () => {
  for (const m of samples) {
    it(`round-trips type ${m.type}`, () => {
      const frame = encodeSample(m, 1000 + m.type);
      const frames = new ControlFrameDecoder().push(frame);
      expect(frames).toHaveLength(1);
      expect(frames[0]!.correlationId).toBe(1000 + m.type);
      expect(frames[0]!.type).toBe(m.type);
      expect(decodeControlMessage(frames[0]!)).toEqual(m);
    });
  }

  it('encodes the typed body to the same bytes as protobufjs converting it first (fromObject)', () => {
    const pb = createRequire(import.meta.url)('protobufjs') as typeof protobuf;
    const root = pb.loadSync(CONTROL_PROTO_PATH);
    for (const m of samples) {
      const t = root.lookupType(`samsa.control.${controlMessageTypeName(m.type)}`);
      const reference = Buffer.from(t.encode(t.fromObject(m.body as unknown as Record<string, unknown>)).finish());
      expect(encodeControlBody(m.type, m.body).equals(reference), controlMessageTypeName(m.type)).toBe(true);
    }
  });

  it('decodes partition states left at zero values as the generic conversion does, with arrays of their own', () => {
    const zero = partitionState({
      topicId: '',
      partition: 0,
      controllerEpoch: 0,
      leader: 0,
      leaderEpoch: 0,
      isr: [],
      zkVersion: 0,
      replicas: [],
      addingReplicas: [],
      isNew: false,
    });
    const body = { controllerId: 0, controllerEpoch: 0, brokerEpoch: 0n, partitionStates: [zero, partitionState()], liveBrokers: [] };
    const [f] = new ControlFrameDecoder().push(encodeControlMessage(3, ControlMessageType.UPDATE_METADATA_REQUEST, body));
    const decoded = decodeControlMessage(f!);
    expect(decoded).toEqual({ type: ControlMessageType.UPDATE_METADATA_REQUEST, body });
    const states = (decoded.body as typeof body).partitionStates;
    expect(Object.getPrototypeOf(states[0])).toBe(Object.prototype);
    states[0]!.isr.push(1);
    expect(states[1]!.isr).toEqual([2, 1]);
  });

  it('fills defaults for fields that were left at zero values', () => {
    const frame = encodeControlMessage(1, ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE, { errorCode: 0, remainingPartitions: [] });
    const [f] = new ControlFrameDecoder().push(frame);
    expect(f!.payload.length).toBe(0);
    expect(decodeControlMessage(f!)).toEqual({ type: 8, body: { errorCode: 0, remainingPartitions: [] } });
  });

  it('rejects a payload that is not valid protobuf with ControlFrameError(bad-payload)', () => {
    const frame: ControlFrame = { correlationId: 1, type: ControlMessageType.LEADER_AND_ISR_REQUEST, payload: Buffer.from([0x0a, 0xff, 0xff]) };
    let err: unknown;
    try {
      decodeControlMessage(frame);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ControlFrameError);
    expect((err as ControlFrameError).reason).toBe('bad-payload');
    expect(errorCodeOf(err)).toBe(42);
  });
});

describe('control – framing', () => {
  const stream = Buffer.concat(samples.map((m, i) => encodeSample(m, i)));

  it('decodes many frames from one chunk', () => {
    const frames = new ControlFrameDecoder().push(stream);
    expect(frames.map((f) => decodeControlMessage(f))).toEqual(samples);
  });

  it('decodes the same frames however the stream is split (byte by byte too)', () => {
    const d = new ControlFrameDecoder();
    const frames: ControlFrame[] = [];
    for (const byte of stream) frames.push(...d.push(Buffer.from([byte])));
    expect(frames.map((f) => f.correlationId)).toEqual(samples.map((_, i) => i));
    expect(d.buffered).toBe(0);
    d.end();

    fc.assert(
      fc.property(fc.array(fc.nat({ max: stream.length }), { maxLength: 20 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const dec = new ControlFrameDecoder();
        const out: ControlFrame[] = [];
        let prev = 0;
        for (const p of [...points, stream.length]) {
          out.push(...dec.push(stream.subarray(prev, p)));
          prev = p;
        }
        expect(out.map((f) => decodeControlMessage(f))).toEqual(samples);
        expect(dec.buffered).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects oversized frames as soon as the length is visible', () => {
    const d = new ControlFrameDecoder({ maxFrameBytes: 1024 });
    const header = Buffer.alloc(4);
    header.writeInt32BE(1025);
    expect(() => d.push(header)).toThrowError(expect.objectContaining({ reason: 'too-large', code: 42 }));
    expect(d.failed).toBe(true);
    expect(() => d.push(Buffer.alloc(1))).toThrowError(expect.objectContaining({ reason: 'failed' }));
  });

  it('rejects undersized and negative lengths', () => {
    for (const len of [0, 5, -1, -2147483648]) {
      const b = Buffer.alloc(4);
      b.writeInt32BE(len);
      expect(() => new ControlFrameDecoder().push(b)).toThrowError(expect.objectContaining({ reason: 'too-small' }));
    }
  });

  it('rejects unknown message types before the payload arrives', () => {
    const frame = encodeFrame({ correlationId: 1, type: 99, payload: Buffer.alloc(1000) });
    const d = new ControlFrameDecoder();
    expect(() => d.push(frame.subarray(0, 10))).toThrowError(expect.objectContaining({ reason: 'unknown-type' }));
    expect(() => decodeControlMessage({ correlationId: 1, type: 0, payload: Buffer.alloc(0) })).toThrowError(ControlFrameError);
  });

  it('reports a stream that ends inside a frame', () => {
    const d = new ControlFrameDecoder();
    expect(d.push(stream.subarray(0, 7))).toEqual([]);
    expect(() => d.end()).toThrowError(expect.objectContaining({ reason: 'truncated' }));
  });

  it('garbage never throws anything but ControlFrameError', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }), (chunks) => {
        const d = new ControlFrameDecoder({ maxFrameBytes: 4096 });
        try {
          for (const c of chunks) for (const f of d.push(c)) decodeControlMessage(f);
          d.end();
        } catch (e) {
          if (!(e instanceof ControlFrameError)) throw e;
        }
      }),
      { numRuns: 1000 },
    );
  });
});

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { KafkaError, decodeResponse, encodeRequest, Reader, readApiVersionsResponse, readResponseHeader } from '@samsa/protocol';
import { CloseConnection } from '../network/socket-server.js';
import type { ApiHandler } from '../api/api-handler.js';
import { RequestHandler } from './request-handler.js';

const logger = pino({ level: 'silent' });
const conn = { id: 1, remote: 'test', listener: 'PLAINTEXT' };
const body = (frame: Buffer | Buffer[] | null) => {
  if (frame === null || Array.isArray(frame)) throw new Error('expected one frame');
  return frame.subarray(4);
};

const metadataThrows: ApiHandler<3, unknown> = {
  apiKey: 3,
  async handle() {
    throw new KafkaError('NOT_CONTROLLER', 'nope');
  },
  errorResponse(req, code) {
    return {
      throttleTimeMs: 0,
      brokers: [],
      clusterId: null,
      controllerId: -1,
      topics: (req.body.topics ?? []).map((t) => ({
        errorCode: code,
        name: t.name,
        topicId: Buffer.alloc(16),
        isInternal: false,
        partitions: [],
        topicAuthorizedOperations: -2147483648,
      })),
      clusterAuthorizedOperations: -2147483648,
    };
  },
};

describe('request handler', () => {
  const rh = new RequestHandler<unknown>([metadataThrows], {}, logger);

  it('request handler – ApiVersions above our maximum gets the KIP-511 v0 answer with UNSUPPORTED_VERSION and our list', async () => {
    const req = encodeRequest(18, 3, 42, 'c', { clientSoftwareName: 'x', clientSoftwareVersion: '1' });
    req.writeInt16BE(99, 6); // api version 99
    const out = body(await rh.handle(req.subarray(4), conn));
    const r = new Reader(out);
    expect(readResponseHeader(r, 0).correlationId).toBe(42);
    const v0 = readApiVersionsResponse(r, 0);
    expect(v0.errorCode).toBe(35);
    // only what this broker serves (plus ApiVersions itself)
    expect(v0.apiKeys.map((k) => k.apiKey).sort((a, b) => a - b)).toEqual([3, 18]);
  });

  it('request handler – an exception becomes the error code in the API response', async () => {
    const req = encodeRequest(3, 9, 7, 'c', {
      topics: [{ topicId: Buffer.alloc(16), name: 't' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const out = body(await rh.handle(req.subarray(4), conn));
    const d = decodeResponse(3, 9, out);
    expect(d.header.correlationId).toBe(7);
    expect(d.body.topics[0]?.errorCode).toBe(41);
  });

  it('request handler – unknown api keys, unsupported versions of other APIs and garbage close the connection', async () => {
    const unknown = Buffer.from([0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0xff, 0xff]);
    await expect(rh.handle(unknown, conn)).rejects.toBeInstanceOf(CloseConnection);
    const req = encodeRequest(3, 9, 7, 'c', {
      topics: null,
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }).subarray(4);
    const bad = Buffer.from(req);
    bad.writeInt16BE(200, 2);
    await expect(rh.handle(bad, conn)).rejects.toBeInstanceOf(CloseConnection);
    await expect(rh.handle(req.subarray(0, 9), conn)).rejects.toBeInstanceOf(CloseConnection);
    // an API the table knows but this broker does not serve
    const produce = encodeRequest(0, 7, 1, 'c', { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [] }).subarray(4);
    await expect(rh.handle(produce, conn)).rejects.toBeInstanceOf(CloseConnection);
  });

  it('request handler – a handler that asks to close the connection (CloseConnection) is not turned into an error response', async () => {
    const closes: ApiHandler<3, unknown> = {
      ...metadataThrows,
      async handle() {
        throw new CloseConnection('acks=0 style close');
      },
    };
    const closing = new RequestHandler<unknown>([closes], {}, logger);
    const req = encodeRequest(3, 9, 7, 'c', {
      topics: null,
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    await expect(closing.handle(req.subarray(4), conn)).rejects.toThrow('acks=0 style close');
  });
});

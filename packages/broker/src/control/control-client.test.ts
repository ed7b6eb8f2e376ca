import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlFrameDecoder, ControlMessageType, encodeControlMessage } from '@samsa/protocol';
import { sendControlRequest } from './control-client.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function listen(onRequest: (s: Socket) => void): Promise<number> {
  server = createServer((s) => {
    const decoder = new ControlFrameDecoder();
    s.on('data', (d: Buffer) => {
      if (decoder.push(d).length > 0) onRequest(s);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server!.address() as { port: number }).port;
}

describe('control client', () => {
  it('control client – the answer of the other broker resolves the request', async () => {
    const port = await listen((s) =>
      s.write(encodeControlMessage(1, ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE, { errorCode: 0, remainingPartitions: [] })),
    );
    const m = await sendControlRequest('127.0.0.1', port, ControlMessageType.CONTROLLED_SHUTDOWN_REQUEST, { brokerId: 1, brokerEpoch: 5n }, 30_000);
    expect(m.type).toBe(ControlMessageType.CONTROLLED_SHUTDOWN_RESPONSE);
  });

  it('control client – a connection closed before the answer (a killed controller) rejects at once, not after the timeout', async () => {
    const port = await listen((s) => s.end());
    const started = Date.now();
    await expect(
      sendControlRequest('127.0.0.1', port, ControlMessageType.CONTROLLED_SHUTDOWN_REQUEST, { brokerId: 1, brokerEpoch: 5n }, 30_000),
    ).rejects.toThrow(/closed before an answer/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

import { connect } from 'node:net';
import {
  ControlFrameDecoder,
  decodeControlMessage,
  encodeControlMessage,
  type ControlMessage,
  type ControlMessageBodies,
  type ControlMessageType,
} from '@samsa/protocol';

/** One control-plane request to another broker's CONTROLLER listener (e.g. ControlledShutdown to the controller). */
export function sendControlRequest<T extends ControlMessageType>(
  host: string,
  port: number,
  type: T,
  body: ControlMessageBodies[T],
  timeoutMs: number,
): Promise<ControlMessage> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port, noDelay: true });
    const decoder = new ControlFrameDecoder();
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`control request to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    s.on('connect', () => s.write(encodeControlMessage(1, type, body)));
    s.on('data', (d: Buffer) => {
      try {
        const frames = decoder.push(d);
        const f = frames[0];
        if (!f) return;
        clearTimeout(timer);
        s.end();
        resolve(decodeControlMessage(f));
      } catch (err) {
        clearTimeout(timer);
        s.destroy();
        reject(err as Error);
      }
    });
    s.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

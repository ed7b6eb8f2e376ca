import { connect } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import {
  ControlFrameDecoder,
  decodeControlMessage,
  encodeControlMessage,
  type ControlMessage,
  type ControlMessageBodies,
  type ControlMessageType,
} from '@samsa/protocol';

/**
 * One control-plane request to another broker's CONTROLLER listener (e.g. ControlledShutdown to the
 * controller). Rejects on a timeout, a socket error, or the connection closing before the answer (a
 * killed controller: the caller retries at once instead of waiting out the timeout).
 */
export function sendControlRequest<T extends ControlMessageType>(
  host: string,
  port: number,
  type: T,
  body: ControlMessageBodies[T],
  timeoutMs: number,
  /** Connect with TLS (the listener's protocol is SSL): the client-side options (security/ssl-factory.ts clientTls). */
  tls?: ConnectionOptions,
): Promise<ControlMessage> {
  return new Promise((resolve, reject) => {
    const s = tls ? tlsConnect({ ...tls, host, port }).setNoDelay(true) : connect({ host, port, noDelay: true });
    const decoder = new ControlFrameDecoder();
    let settled = false;
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
    };
    const timer = setTimeout(
      () =>
        settle(() => {
          s.destroy();
          reject(new Error(`control request to ${host}:${port} timed out after ${timeoutMs} ms`));
        }),
      timeoutMs,
    );
    s.on(tls ? 'secureConnect' : 'connect', () => s.write(encodeControlMessage(1, type, body)));
    s.on('data', (d: Buffer) => {
      try {
        const frames = decoder.push(d);
        const f = frames[0];
        if (!f) return;
        settle(() => {
          s.end();
          resolve(decodeControlMessage(f));
        });
      } catch (err) {
        settle(() => {
          s.destroy();
          reject(err as Error);
        });
      }
    });
    s.on('error', (err) => settle(() => reject(err)));
    s.on('close', () => settle(() => reject(new Error(`control connection to ${host}:${port} closed before an answer`))));
  });
}

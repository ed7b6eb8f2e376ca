/**
 * The socket I/O of node-zookeeper-client 1.1.3's ConnectionManager, made linear in the number of
 * packets. Installed once, process-wide, by the ZkClient module (`installZkConnectionIo`).
 *
 * Reading. The library handles one packet per `onSocketData` call: it concatenates the unread bytes
 * with the new chunk, handles the first packet, and calls itself with the rest, concatenating
 * (copying) the rest again. A chunk holding n packets is copied n times. That is what ZooKeeper
 * sends a hot-standby broker while the controller writes 10,000 partition states (a watch
 * notification each, ~60 per 4 KiB): quadratic copying, a tenth of a broker's CPU during a
 * controlled shutdown. Here complete packets are cut out of the stream by their length prefix
 * without copying (`subarray`) and the library's own handler gets exactly one packet per call, the
 * case in which it neither copies nor recurses. The bytes of an incomplete packet wait for the next
 * chunk; those of a previous connection are dropped (the library kept them across reconnects).
 *
 * Writing. The library writes each request to the socket as it is queued: 10,000 pipelined reads
 * are 10,000 `write` system calls. Here the socket is corked when a request is queued and uncorked
 * on the next tick, so the requests queued in one turn of the event loop leave in one write.
 */
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

const require = createRequire(import.meta.url);

const READ_STATE = Symbol('samsa.zkRead');
const CORKED = Symbol('samsa.zkCorked');
const ORIGINALS = Symbol('samsa.zkOriginals');
const EMPTY = Buffer.alloc(0);

type CorkableSocket = Socket & { [CORKED]?: boolean };

/** The parts of the library's ConnectionManager this module touches. */
interface ConnectionManagerLike {
  socket: CorkableSocket | undefined;
  pendingBuffer: Buffer | null;
  [READ_STATE]?: { socket: Socket | undefined; unread: Buffer };
}

type Handler<A extends unknown[]> = (this: ConnectionManagerLike, ...args: A) => void;
interface Originals {
  onSocketData: Handler<[Buffer]>;
  onPacketQueueReadable: Handler<[]>;
}
interface ConnectionManagerPrototype extends Originals {
  [ORIGINALS]?: Originals;
}

/** The library's ConnectionManager prototype (an internal module of node-zookeeper-client). */
function connectionManagerPrototype(): ConnectionManagerPrototype {
  return (require('node-zookeeper-client/lib/ConnectionManager.js') as { prototype: ConnectionManagerPrototype }).prototype;
}

/** Replaces the library's socket reader and writer (idempotent). Returns the library's own methods. */
export function installZkConnectionIo(): Originals {
  const proto = connectionManagerPrototype();
  const installed = proto[ORIGINALS];
  if (installed) return installed;
  const originals: Originals = { onSocketData: proto.onSocketData, onPacketQueueReadable: proto.onPacketQueueReadable };
  proto[ORIGINALS] = originals;
  const handlePacket = originals.onSocketData;
  const writeQueued = originals.onPacketQueueReadable;

  proto.onSocketData = function onSocketData(this: ConnectionManagerLike, chunk: Buffer): void {
    const socket = this.socket;
    let state = this[READ_STATE];
    if (!state || state.socket !== socket) {
      state = { socket, unread: EMPTY };
      this[READ_STATE] = state;
    }
    const buf = state.unread.length === 0 ? chunk : Buffer.concat([state.unread, chunk]);
    let at = 0;
    while (buf.length - at >= 4) {
      const size = buf.readInt32BE(at);
      if (size < 0) {
        // not ZooKeeper's framing: drop the connection (the library reconnects)
        state.unread = EMPTY;
        socket?.destroy();
        return;
      }
      if (buf.length - at < size + 4) break;
      const packet = buf.subarray(at, at + 4 + size);
      at += 4 + size;
      this.pendingBuffer = null;
      handlePacket.call(this, packet);
      // the handler gave up on this connection (an out-of-order reply): the rest is not read
      if (this.socket !== socket || socket?.destroyed) {
        state.unread = EMPTY;
        return;
      }
    }
    state.unread = at === buf.length ? EMPTY : buf.subarray(at);
  };

  proto.onPacketQueueReadable = function onPacketQueueReadable(this: ConnectionManagerLike): void {
    const socket = this.socket;
    if (socket && !socket[CORKED] && !socket.destroyed) {
      socket[CORKED] = true;
      socket.cork();
      process.nextTick(() => {
        socket[CORKED] = false;
        socket.uncork();
      });
    }
    writeQueued.call(this);
  };
  return originals;
}

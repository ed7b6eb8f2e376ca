import { connect } from 'node:net';

/** Sends a ZooKeeper four-letter command (`srvr`, `ruok`, `mntr`...) and returns the raw answer. */
export function fourLetter(host: string, port: number, cmd: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`${cmd} to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('connect', () => sock.write(cmd));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} to ${host}:${port} failed: ${err.message}`, { cause: err }));
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

export const ZkMode = { Leader: 'leader', Follower: 'follower', Standalone: 'standalone', Observer: 'observer' } as const;
export type ZkMode = (typeof ZkMode)[keyof typeof ZkMode];

export interface SrvrInfo {
  mode: ZkMode;
  version: string;
  zxid: string;
  nodeCount: number;
}

/** Parses a `srvr` answer. Returns null while the server is not serving (no `Mode:` line). */
export function parseSrvr(text: string): SrvrInfo | null {
  const field = (name: string): string | undefined => {
    const m = new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(text);
    return m?.[1]?.trim();
  };
  const mode = field('Mode');
  if (!mode) return null;
  if (!Object.values(ZkMode).includes(mode as ZkMode)) return null;
  return {
    mode: mode as ZkMode,
    version: field('Zookeeper version') ?? 'unknown',
    zxid: field('Zxid') ?? '',
    nodeCount: Number(field('Node count') ?? '0'),
  };
}

/** `srvr` parsed; null when the server is up but not serving, throws when unreachable. */
export async function srvr(host: string, port: number, timeoutMs = 1000): Promise<SrvrInfo | null> {
  return parseSrvr(await fourLetter(host, port, 'srvr', timeoutMs));
}

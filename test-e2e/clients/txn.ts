/**
 * Helpers for the transaction e2e suites: the librdkafka transactional client (txn_producer.py, run
 * with Debian's /usr/bin/python3, which has python3-confluent-kafka), kcat reads with
 * read_committed / read_uncommitted, ListOffsets' latest offset by isolation level (the LSO or the
 * high watermark), and where a transactional id's coordinator lives.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { topicPartitionKey } from '@samsa/protocol';
import { rawRequest } from './wire.js';

const SCRIPT = fileURLToPath(new URL('./txn_producer.py', import.meta.url));
export const SYSTEM_PYTHON = '/usr/bin/python3';

export interface PythonClient {
  proc: ChildProcessWithoutNullStreams;
  /** Every JSON line it printed so far. */
  lines: Array<Record<string, unknown>>;
  /** Resolves with the first line `pred` accepts (rejects if it exits first). */
  line(pred: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with its exit code. */
  exited: Promise<number | null>;
  stderr(): string;
}

/** Starts txn_producer.py `mode` with `args` (TXN_PRODUCER_DEBUG_FILE: its stderr copied there, e.g. with TXN_PRODUCER_DEBUG=eos,protocol). */
export function startPython(mode: 'produce' | 'ctp' | 'hang', args: Array<string | number>): PythonClient {
  const proc = spawn(SYSTEM_PYTHON, [SCRIPT, mode, ...args.map(String)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let err = '';
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  if (process.env['TXN_PRODUCER_DEBUG_FILE']) proc.stderr.pipe(createWriteStream(process.env['TXN_PRODUCER_DEBUG_FILE']));
  createInterface({ input: proc.stdout }).on('line', (l) => {
    try {
      lines.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      err += `(stdout) ${l}\n`;
    }
    for (const w of waiters.splice(0)) w();
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    proc.on('close', (code) => {
      exitCode = code;
      for (const w of waiters.splice(0)) w();
      resolve(code);
    }),
  );
  const line = (pred: (l: Record<string, unknown>) => boolean, timeoutMs = 120_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`txn_producer.py ${mode}: no such line within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`)), timeoutMs);
      const check = () => {
        const l = lines.find(pred);
        if (l) {
          clearTimeout(timer);
          resolve(l);
        } else if (exitCode !== undefined) {
          clearTimeout(timer);
          reject(new Error(`txn_producer.py ${mode} exited ${exitCode}: ${JSON.stringify(lines.at(-1))}; stderr: ${err.slice(-2000)}`));
        } else waiters.push(check);
      };
      check();
    });
  return { proc, lines, line, exited, stderr: () => err };
}

/** `kcat -C -e` of a whole topic: one "partition offset key value" line per record, up to the end (the LSO with read_committed). */
export function kcatRead(bootstrap: string, topic: string, isolation: 'read_committed' | 'read_uncommitted', timeoutMs = 120_000): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const p = spawn('kcat', ['-C', '-b', bootstrap, '-t', topic, '-e', '-o', 'beginning', '-q', '-X', `isolation.level=${isolation}`, '-f', '%p %o %k %s\n']);
    const chunks: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (c: Buffer) => chunks.push(c));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0)
        resolve(
          Buffer.concat(chunks)
            .toString()
            .split('\n')
            .filter((l) => l !== ''),
        );
      else reject(new Error(`kcat -C (${isolation}) exited ${code}: ${err}`));
    });
  });
}

/** The values of kcat lines ("partition offset key value"). */
export const valuesOf = (lines: string[]): string[] => lines.map((l) => l.split(' ').slice(3).join(' '));

/** ListOffsets v4 latest offset of one partition from its leader: the LSO (read_committed) or the high watermark. */
export async function latestOffset(leaderAddress: string, topic: string, partition: number, isolation: 'read_committed' | 'read_uncommitted'): Promise<bigint> {
  const res = await rawRequest(leaderAddress, 2, 4, {
    replicaId: -1,
    isolationLevel: isolation === 'read_committed' ? 1 : 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
  });
  const p = res.topics[0]!.partitions[0]!;
  if (p.errorCode !== 0) throw new Error(`ListOffsets ${topicPartitionKey(topic, partition)} at ${leaderAddress}: error ${p.errorCode}`);
  return p.offset;
}

/** Java's String.hashCode (Kafka's Utils.abs(transactionalId.hashCode) % partitions picks the coordinator). */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** The __transaction_state partition of `transactionalId`. */
export function transactionStatePartition(transactionalId: string, partitions: number): number {
  const h = javaStringHashCode(transactionalId);
  return (h === -2147483648 ? 0 : Math.abs(h)) % partitions;
}

/** FindCoordinator v1 (key type 1) at `address` until it names the coordinator of `transactionalId` (creating __transaction_state on first use). */
export async function findTransactionCoordinator(address: string, transactionalId: string, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await rawRequest(address, 10, 1, { key: transactionalId, keyType: 1, coordinatorKeys: [] }).catch(() => null);
    if (res && res.errorCode === 0) return res.nodeId;
    if (Date.now() > deadline) throw new Error(`no coordinator for ${transactionalId} within ${timeoutMs} ms (last error ${res?.errorCode})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

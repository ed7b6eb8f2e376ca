/**
 * Helpers for the secured e2e suites: SCRAM credentials written into ZooKeeper as Kafka's
 * `kafka-configs.sh --zookeeper` does (for the inter-broker user, before the brokers start), kcat
 * and KafkaJS on SASL_SSL, and the Kafka error type of a KafkaJS failure.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { SCRAM_MECHANISMS, formatCredential, generateCredential } from '@samsa/broker';
import type { GeneratedCertificates } from '@samsa/local-cluster';
import { ConfigType, type KafkaZk } from '@samsa/zk-paths';

/** Kafka's ScramFormatter: `salt=…,stored_key=…,server_key=…,iterations=…` (base64), by the broker's own SCRAM code. */
export function scramCredential(mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', password: string, iterations = 4096): string {
  return formatCredential(generateCredential(SCRAM_MECHANISMS[mechanism], password, iterations));
}

/** `/config/users/<user>` with the user's SCRAM credentials, and its `/config/changes` notification. */
export async function writeScramUser(zk: KafkaZk, user: string, passwords: Partial<Record<'SCRAM-SHA-256' | 'SCRAM-SHA-512', string>>): Promise<void> {
  const config = Object.fromEntries(Object.entries(passwords).map(([m, p]) => [m, scramCredential(m as 'SCRAM-SHA-256' | 'SCRAM-SHA-512', p)]));
  await zk.changeEntityConfig(ConfigType.User, user, config);
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command (optional stdin); never rejects: the exit code, output and run time. */
export function exec(cmd: string, args: string[], o: { input?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const p = execFile(cmd, args, { timeout: o.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
    p.stdin?.end(o.input ?? '');
  });
}

/** kcat's `-X` settings for SCRAM-SHA-512 over SASL_PLAINTEXT, or over SASL_SSL with `caFile`. */
export const kcatScram = (user: string, password: string, caFile?: string): string[] => [
  '-X',
  `security.protocol=${caFile ? 'SASL_SSL' : 'SASL_PLAINTEXT'}`,
  '-X',
  'sasl.mechanisms=SCRAM-SHA-512',
  '-X',
  `sasl.username=${user}`,
  '-X',
  `sasl.password=${password}`,
  ...(caFile ? ['-X', `ssl.ca.location=${caFile}`] : []),
];

/** A broker's `ssl.*` settings for the PEM key and trust stores `generateCertificates` wrote. */
export const pemSslOverrides = (certs: GeneratedCertificates): Record<string, string> => ({
  'ssl.keystore.type': 'PEM',
  'ssl.keystore.location': certs.broker.keystore,
  'ssl.truststore.type': 'PEM',
  'ssl.truststore.location': certs.caCert,
});

/** The Kafka error type of a KafkaJS failure (walking its causes), or null. */
export function kafkajsErrorType(err: unknown): string | null {
  let e = err as { type?: string; cause?: unknown; originalError?: unknown; errors?: unknown[] } | undefined;
  for (let i = 0; e && i < 6; i++) {
    if (e.type) return e.type;
    e = (e.cause ?? e.originalError ?? e.errors?.[0]) as typeof e;
  }
  return null;
}

/** Resident set size of a process in kB (VmRSS of /proc/<pid>/status). */
export async function rssKb(pid: number): Promise<number> {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

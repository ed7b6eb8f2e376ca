/**
 * SCRAM credentials (KIP-554): Kafka's Admin.describeUserScramCredentials (any broker) and
 * alterUserScramCredentials (the controller, in ZooKeeper mode). The password never leaves the
 * client: it is salted and hashed here (PBKDF2, a random salt), as the Java admin client does.
 */
import { pbkdf2, randomBytes } from 'node:crypto';
import {
  API_KEYS,
  ErrorCode,
  KafkaError,
  type AlterUserScramCredentialsRequestScramCredentialDeletion,
  type AlterUserScramCredentialsRequestScramCredentialUpsertion,
} from '@samsa/protocol';
import type { Cluster } from './cluster.js';
import { BatchError, brokerError } from './errors.js';

export type ScramMechanismName = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
const MECHANISM_TYPE: Readonly<Record<ScramMechanismName, number>> = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 };
const MECHANISM_NAME: Readonly<Record<number, ScramMechanismName>> = { 1: 'SCRAM-SHA-256', 2: 'SCRAM-SHA-512' };

export type UserScramCredentialAlteration =
  { user: string; mechanism: ScramMechanismName; password: string; iterations?: number } | { user: string; mechanism: ScramMechanismName; delete: true };

export interface UserScramCredentialsDescription {
  user: string;
  credentials: Array<{ mechanism: ScramMechanismName | 'UNKNOWN'; iterations: number }>;
}

async function salted(mechanism: ScramMechanismName, password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  const [hash, len] = mechanism === 'SCRAM-SHA-256' ? (['sha256', 32] as const) : (['sha512', 64] as const);
  return new Promise((resolve, reject) => pbkdf2(Buffer.from(password, 'utf8'), salt, iterations, len, hash, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Upserts (password, default 4096 iterations) and deletes credentials; BatchError keyed by user on failures. */
export async function alterUserScramCredentials(
  cluster: Cluster,
  alterations: readonly UserScramCredentialAlteration[],
  opts: { timeoutMs?: number } = {},
): Promise<void> {
  if (alterations.length === 0) return;
  const upsertions: AlterUserScramCredentialsRequestScramCredentialUpsertion[] = [];
  const deletions: AlterUserScramCredentialsRequestScramCredentialDeletion[] = [];
  for (const a of alterations) {
    const mechanism = MECHANISM_TYPE[a.mechanism];
    if ('delete' in a) deletions.push({ name: a.user, mechanism });
    else {
      const iterations = a.iterations ?? 4096;
      const salt = randomBytes(32);
      upsertions.push({ name: a.user, mechanism, iterations, salt, saltedPassword: await salted(a.mechanism, a.password, salt, iterations) });
    }
  }
  const res = await cluster.retry(
    'alterUserScramCredentials',
    async () => {
      const conn = await cluster.controllerConnection();
      const r = await conn.request(API_KEYS.AlterUserScramCredentials, { deletions, upsertions });
      if (r.body.results.some((x) => x.errorCode === ErrorCode.NOT_CONTROLLER)) {
        cluster.invalidateController();
        throw new KafkaError('NOT_CONTROLLER', `Broker ${conn.describe()} is not the controller`);
      }
      return r;
    },
    opts,
  );
  const errors = new Map<string, KafkaError>();
  const ok: string[] = [];
  for (const r of res.body.results) {
    if (r.errorCode === ErrorCode.NONE) ok.push(r.user);
    else errors.set(r.user, brokerError(r.errorCode, r.errorMessage));
  }
  if (errors.size > 0) throw new BatchError('alterUserScramCredentials', errors, ok);
}

/** Mechanisms and iterations of the users' credentials (all users with one when `users` is absent). */
export async function describeUserScramCredentials(
  cluster: Cluster,
  users?: readonly string[],
  opts: { timeoutMs?: number } = {},
): Promise<UserScramCredentialsDescription[]> {
  const res = await cluster.retry(
    'describeUserScramCredentials',
    async () => {
      const conn = await cluster.anyConnection();
      return conn.request(API_KEYS.DescribeUserScramCredentials, { users: users ? users.map((name) => ({ name })) : null });
    },
    opts,
  );
  if (res.body.errorCode !== ErrorCode.NONE) throw brokerError(res.body.errorCode, res.body.errorMessage);
  const errors = new Map<string, KafkaError>();
  const out: UserScramCredentialsDescription[] = [];
  for (const r of res.body.results) {
    if (r.errorCode !== ErrorCode.NONE) errors.set(r.user, brokerError(r.errorCode, r.errorMessage));
    else
      out.push({
        user: r.user,
        credentials: r.credentialInfos.map((c) => ({ mechanism: MECHANISM_NAME[c.mechanism] ?? 'UNKNOWN', iterations: c.iterations })),
      });
  }
  if (errors.size > 0)
    throw new BatchError(
      'describeUserScramCredentials',
      errors,
      out.map((o) => o.user),
    );
  return out;
}

/**
 * AlterUserScramCredentials (51) and DescribeUserScramCredentials (50) through the request
 * dispatcher against the in-memory ZooKeeper: Kafka's znode and notifications, quota keys kept,
 * Kafka's error codes, and the credential cache following the user config.
 */
import { createHmac, createHash, pbkdf2Sync } from 'node:crypto';
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, decodeResponse, encodeRequest, type ApiKey, type ApiRequestMap, type ApiResponseMap } from '@samsa/protocol';
import { ConfigType, FakeZkClient, KafkaZk } from '@samsa/zk-paths';
import type { ConnectionInfo } from '../network/socket-server.js';
import { RequestHandler } from '../server/request-handler.js';
import type { BrokerServices } from './services.js';
import { alterUserScramCredentialsHandler, describeUserScramCredentialsHandler, saslAuthenticateHandler, saslHandshakeHandler } from './sasl.js';
import { ScramCredentialCache } from '../security/scram-credential-cache.js';
import { buildBrokerConfig } from '../config/index.js';

const conn: ConnectionInfo = { id: 1, remote: '127.0.0.1:1', listener: 'PLAINTEXT' };
let kzk: KafkaZk;
let rh: RequestHandler<BrokerServices>;
let isController: boolean;

async function call<K extends ApiKey>(key: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
  const out = await rh.handle(encodeRequest(key, version, 7, 'test', body).subarray(4), conn);
  if (!Buffer.isBuffer(out)) throw new Error('expected one frame');
  return decodeResponse(key, version, out.subarray(4)).body;
}

const salt = Buffer.from('0123456789abcdef');
const upsert = (name: string, mechanism = 1, iterations = 4096, password = 'pw') => ({
  name,
  mechanism,
  iterations,
  salt,
  saltedPassword: pbkdf2Sync(password, salt, iterations, mechanism === 2 ? 64 : 32, mechanism === 2 ? 'sha512' : 'sha256'),
});
const alter = (upsertions: ReturnType<typeof upsert>[], deletions: Array<{ name: string; mechanism: number }> = []) =>
  call(51, 0, { upsertions, deletions }).then((r) => r.results);
const changes = async () => (await kzk.zk.getChildren('/config/changes')).length;

beforeEach(async () => {
  kzk = new KafkaZk(new FakeZkClient());
  await kzk.createPersistentPaths();
  isController = true;
  const services = {
    brokerId: 1,
    kzk,
    log: pino({ level: 'silent' }),
    config: buildBrokerConfig({ properties: { 'zookeeper.connect': 'z:1', 'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512' } }),
    controller: {
      get isActive() {
        return isController;
      },
    },
  } as unknown as BrokerServices;
  rh = new RequestHandler(
    [alterUserScramCredentialsHandler, describeUserScramCredentialsHandler, saslHandshakeHandler, saslAuthenticateHandler],
    services,
    pino({ level: 'silent' }),
  );
});

describe('SCRAM credential handlers', () => {
  it("AlterUserScramCredentials – an upsertion writes Kafka's credential into /config/users/<sanitized user>, keeps quota keys, and announces it", async () => {
    await kzk.changeEntityConfig(ConfigType.User, 'al%40ice', { producer_byte_rate: '1024' });
    const before = await changes();
    expect(await alter([upsert('al@ice', 1, 8192)])).toEqual([{ user: 'al@ice', errorCode: 0, errorMessage: null }]);
    expect(await changes()).toBe(before + 1);
    const config = await kzk.getEntityConfig(ConfigType.User, 'al%40ice');
    expect(config['producer_byte_rate']).toBe('1024');
    const salted = upsert('x', 1, 8192).saltedPassword;
    const storedKey = createHash('sha256').update(createHmac('sha256', salted).update('Client Key').digest()).digest();
    const serverKey = createHmac('sha256', salted).update('Server Key').digest();
    expect(config['SCRAM-SHA-256']).toBe(
      `salt=${salt.toString('base64')},stored_key=${storedKey.toString('base64')},server_key=${serverKey.toString('base64')},iterations=8192`,
    );

    // the credential cache follows the whole user config
    const cache = new ScramCredentialCache();
    expect(cache.updateUser('al@ice', config)).toEqual([]);
    expect(cache.get('SCRAM-SHA-256', 'al@ice')?.iterations).toBe(8192);
    cache.updateUser('al@ice', { producer_byte_rate: '1024' });
    expect(cache.get('SCRAM-SHA-256', 'al@ice')).toBeUndefined();
    expect(cache.updateUser('bob', { 'SCRAM-SHA-512': 'garbage' })).toEqual(['SCRAM-SHA-512']);
  });

  it("AlterUserScramCredentials – Kafka's errors: empty user, unknown mechanism, iterations out of range, a mechanism altered twice, deleting a missing credential; other users still change", async () => {
    const results = await alter(
      [upsert(''), upsert('m', 3), upsert('few', 1, 1000), upsert('many', 1, 20000), upsert('dup'), upsert('ok', 2)],
      [
        { name: 'dup', mechanism: 1 },
        { name: 'ghost', mechanism: 2 },
      ],
    );
    const byUser = Object.fromEntries(results.map((r) => [r.user, [r.errorCode, r.errorMessage]]));
    expect(byUser).toEqual({
      '': [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty'],
      m: [ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism'],
      few: [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations'],
      many: [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations'],
      dup: [ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request'],
      ghost: [ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
      ok: [ErrorCode.NONE, null],
    });
    expect(Object.keys(await kzk.getEntityConfig(ConfigType.User, 'ok'))).toEqual(['SCRAM-SHA-512']);
    expect(await kzk.getEntityConfig(ConfigType.User, 'dup')).toEqual({});
  });

  it('AlterUserScramCredentials – a deletion removes one mechanism; a broker that is not the controller answers NOT_CONTROLLER', async () => {
    await alter([upsert('u', 1), upsert('u', 2)]);
    expect((await alter([], [{ name: 'u', mechanism: 1 }]))[0]?.errorCode).toBe(0);
    expect(Object.keys(await kzk.getEntityConfig(ConfigType.User, 'u'))).toEqual(['SCRAM-SHA-512']);
    isController = false;
    expect(await alter([upsert('v')])).toEqual([{ user: 'v', errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null }]);
  });

  it('DescribeUserScramCredentials – mechanisms and iterations per user; all users sorted; unknown, empty and repeated users get their errors', async () => {
    await alter([upsert('bob', 2, 5000), upsert('alice', 1), upsert('alice', 2)]);
    await kzk.changeEntityConfig(ConfigType.User, 'quota-only', { producer_byte_rate: '1' });
    const all = await call(50, 0, { users: null });
    expect(all.errorCode).toBe(0);
    expect(all.results).toEqual([
      {
        user: 'alice',
        errorCode: 0,
        errorMessage: null,
        credentialInfos: [
          { mechanism: 1, iterations: 4096 },
          { mechanism: 2, iterations: 4096 },
        ],
      },
      { user: 'bob', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 5000 }] },
    ]);
    const some = await call(50, 0, { users: [{ name: 'bob' }, { name: 'quota-only' }, { name: '' }, { name: 'x' }, { name: 'x' }] });
    expect(some.results.map((r) => [r.user, r.errorCode])).toEqual([
      ['bob', 0],
      ['quota-only', ErrorCode.RESOURCE_NOT_FOUND],
      ['', ErrorCode.RESOURCE_NOT_FOUND],
      ['x', ErrorCode.DUPLICATE_RESOURCE],
    ]);
  });

  it('SaslHandshake / SaslAuthenticate outside an authentication are ILLEGAL_SASL_STATE, as Kafka answers on a PLAINTEXT listener', async () => {
    expect(await call(17, 1, { mechanism: 'PLAIN' })).toEqual({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: ['PLAIN', 'SCRAM-SHA-512'] });
    expect((await call(36, 2, { authBytes: Buffer.from('x') })).errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
  });
});

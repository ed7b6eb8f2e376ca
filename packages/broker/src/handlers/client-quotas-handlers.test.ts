/**
 * AlterClientQuotas (49) and DescribeClientQuotas (48) through the request dispatcher at every
 * advertised version, against the in-memory ZooKeeper: the znodes Kafka's ZooKeeper mode writes,
 * /config/changes notifications, Kafka's validation errors and the describe filter rules.
 */
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, decodeResponse, encodeRequest, getApi, type ApiKey, type ApiRequestMap, type ApiResponseMap } from '@samsa/protocol';
import { ConfigType, FakeZkClient, KafkaZk } from '@samsa/zk-paths';
import type { ConnectionInfo } from '../network/socket-server.js';
import { RequestHandler } from '../server/request-handler.js';
import type { BrokerServices } from './services.js';
import { alterClientQuotasHandler } from './alter-client-quotas.js';
import { describeClientQuotasHandler } from './describe-client-quotas.js';

const conn: ConnectionInfo = { id: 1, remote: '127.0.0.1:1', listener: 'PLAINTEXT' };
const versions = (key: number) => {
  const api = getApi(key)!;
  return Array.from({ length: api.maxVersion - api.minVersion + 1 }, (_, i) => api.minVersion + i);
};

let kzk: KafkaZk;
let rh: RequestHandler<BrokerServices>;

async function call<K extends ApiKey>(key: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
  const out = await rh.handle(encodeRequest(key, version, 7, 'test', body).subarray(4), conn);
  if (!Buffer.isBuffer(out)) throw new Error('expected one frame');
  return decodeResponse(key, version, out.subarray(4)).body;
}

type Entity = Array<{ entityType: string; entityName: string | null }>;
const user = (n: string | null) => ({ entityType: 'user', entityName: n });
const client = (n: string | null) => ({ entityType: 'client-id', entityName: n });
const set = (key: string, value: number) => ({ key, value, remove: false });
const alter = (v: number, entity: Entity, ops: Array<{ key: string; value: number; remove: boolean }>, validateOnly = false) =>
  call(49, v, { entries: [{ entity, ops }], validateOnly }).then((r) => r.entries[0]!);
const changes = async () => (await kzk.zk.getChildren('/config/changes')).length;

beforeEach(async () => {
  kzk = new KafkaZk(new FakeZkClient());
  await kzk.createPersistentPaths();
  const services = { brokerId: 1, kzk, log: pino({ level: 'silent' }) } as unknown as BrokerServices;
  rh = new RequestHandler([alterClientQuotasHandler, describeClientQuotasHandler], services, pino({ level: 'silent' }));
});

describe('client quota handlers', () => {
  it("AlterClientQuotas – every version: user, client-id, user+client-id and default entities land in Kafka's znodes with a /config/changes notification each", async () => {
    for (const v of versions(49)) {
      const before = await changes();
      expect(await alter(v, [client('slow')], [set('producer_byte_rate', 1048576), set('consumer_byte_rate', 2048)])).toEqual({
        errorCode: 0,
        errorMessage: null,
        entity: [client('slow')],
      });
      expect(await kzk.getEntityConfig(ConfigType.Client, 'slow')).toEqual({ producer_byte_rate: '1048576', consumer_byte_rate: '2048' });
      expect((await alter(v, [user('alice'), client('app')], [set('request_percentage', 50)])).errorCode).toBe(0);
      expect(await kzk.getEntityConfig(ConfigType.User, 'alice/clients/app')).toEqual({ request_percentage: '50.0' });
      expect((await alter(v, [user(null)], [set('producer_byte_rate', 4096)])).errorCode).toBe(0);
      expect(await kzk.getEntityConfig(ConfigType.User, '<default>')).toEqual({ producer_byte_rate: '4096' });
      // names are sanitized as Kafka's Sanitizer does
      expect((await alter(v, [user('CN=bob, O=x')], [set('consumer_byte_rate', 1)])).errorCode).toBe(0);
      expect(await kzk.getEntityConfig(ConfigType.User, 'CN%3Dbob%2C%20O%3Dx')).toEqual({ consumer_byte_rate: '1' });
      // a remove op drops the key, the others stay
      expect((await alter(v, [client('slow')], [{ key: 'consumer_byte_rate', value: 0, remove: true }])).errorCode).toBe(0);
      expect(await kzk.getEntityConfig(ConfigType.Client, 'slow')).toEqual({ producer_byte_rate: '1048576' });
      expect(await changes()).toBe(before + 5);
      const note = await kzk.zk.get(`/config/changes/${(await kzk.zk.getChildren('/config/changes')).sort().at(-1)}`);
      expect(JSON.parse(note.data.toString())).toEqual({ version: 2, entity_path: 'clients/slow' });
    }
  });

  it('AlterClientQuotas – validate_only writes nothing; unknown keys, fractional LONGs, bad entities are INVALID_REQUEST per entry', async () => {
    const before = await changes();
    expect((await alter(1, [client('c')], [set('producer_byte_rate', 10)], true)).errorCode).toBe(0);
    expect(await kzk.getEntityConfig(ConfigType.Client, 'c')).toEqual({});
    expect(await changes()).toBe(before);
    const bad = async (entity: Entity, ops: Array<{ key: string; value: number; remove: boolean }>) => {
      const r = await alter(1, entity, ops);
      expect(r.errorCode).toBe(ErrorCode.INVALID_REQUEST);
      return r.errorMessage;
    };
    expect(await bad([client('c')], [set('producer_bytes_rate', 10)])).toBe('Invalid configuration key producer_bytes_rate');
    expect(await bad([client('c')], [set('producer_byte_rate', 10.5)])).toBe('Configuration producer_byte_rate must be a LONG value');
    expect(await bad([], [set('producer_byte_rate', 10)])).toBe('Invalid empty client quota entity');
    expect(await bad([{ entityType: 'group', entityName: 'g' }], [set('producer_byte_rate', 10)])).toBe('Unhandled client quota entity type: group');
    expect(await bad([client('')], [set('producer_byte_rate', 10)])).toBe('Empty client-id not supported');
    expect(await bad([user('u'), { entityType: 'ip', entityName: '10.0.0.1' }], [set('connection_creation_rate', 5)])).toMatch(/IP entity should not be used/);
    expect(await bad([{ entityType: 'ip', entityName: 'not an ip' }], [set('connection_creation_rate', 5)])).toMatch(/not a valid IP/);
    // one bad entry does not fail the others
    const r = await call(49, 1, {
      entries: [
        { entity: [client('ok')], ops: [set('producer_byte_rate', 7)] },
        { entity: [client('ko')], ops: [set('nope', 1)] },
      ],
      validateOnly: false,
    });
    expect(r.entries.map((e) => e.errorCode)).toEqual([0, ErrorCode.INVALID_REQUEST]);
    expect(await kzk.getEntityConfig(ConfigType.Client, 'ok')).toEqual({ producer_byte_rate: '7' });
    expect(await changes()).toBe(before + 1);
  });

  it('DescribeClientQuotas – every version: EXACT, DEFAULT and SPECIFIED components, strict or not', async () => {
    await alter(1, [client('a')], [set('producer_byte_rate', 100)]);
    await alter(1, [client(null)], [set('consumer_byte_rate', 200)]);
    await alter(1, [user('alice')], [set('request_percentage', 12.5)]);
    await alter(1, [user('alice'), client('a')], [set('producer_byte_rate', 300)]);
    await alter(1, [user('CN=bob, O=x'), client(null)], [set('consumer_byte_rate', 400)]);
    for (const v of versions(48)) {
      const describe = async (components: Array<{ entityType: string; matchType: number; match: string | null }>, strict: boolean) => {
        const r = await call(48, v, { components, strict });
        expect(r.errorCode).toBe(0);
        return r
          .entries!.map(
            (e) => `${e.entity.map((x) => `${x.entityType}=${x.entityName ?? '<default>'}`).join(',')}:${e.values.map((x) => `${x.key}=${x.value}`).join(',')}`,
          )
          .sort();
      };
      expect(await describe([{ entityType: 'client-id', matchType: 0, match: 'a' }], true)).toEqual(['client-id=a:producer_byte_rate=100']);
      expect(await describe([{ entityType: 'client-id', matchType: 0, match: 'a' }], false)).toEqual([
        'client-id=a:producer_byte_rate=100',
        'user=alice,client-id=a:producer_byte_rate=300',
      ]);
      expect(await describe([{ entityType: 'client-id', matchType: 1, match: null }], true)).toEqual(['client-id=<default>:consumer_byte_rate=200']);
      expect(await describe([{ entityType: 'client-id', matchType: 1, match: null }], false)).toEqual([
        'client-id=<default>:consumer_byte_rate=200',
        'user=CN=bob, O=x,client-id=<default>:consumer_byte_rate=400',
      ]);
      expect(await describe([{ entityType: 'user', matchType: 2, match: null }], true)).toEqual(['user=alice:request_percentage=12.5']);
      expect(
        await describe(
          [
            { entityType: 'user', matchType: 2, match: null },
            { entityType: 'client-id', matchType: 2, match: null },
          ],
          true,
        ),
      ).toEqual(['user=CN=bob, O=x,client-id=<default>:consumer_byte_rate=400', 'user=alice,client-id=a:producer_byte_rate=300']);
      expect(
        await describe(
          [
            { entityType: 'user', matchType: 0, match: 'alice' },
            { entityType: 'client-id', matchType: 0, match: 'a' },
          ],
          true,
        ),
      ).toEqual(['user=alice,client-id=a:producer_byte_rate=300']);
      expect(await describe([], false)).toHaveLength(5);
      expect(await describe([], true)).toEqual([]);
    }
  });

  it('DescribeClientQuotas – a duplicate component is INVALID_REQUEST, a custom entity type UNSUPPORTED_VERSION, ip with user INVALID_REQUEST', async () => {
    const dup = await call(48, 1, {
      components: [
        { entityType: 'user', matchType: 2, match: null },
        { entityType: 'user', matchType: 1, match: null },
      ],
      strict: false,
    });
    expect(dup).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate user filter component entity type', entries: null });
    expect((await call(48, 1, { components: [{ entityType: 'group', matchType: 2, match: null }], strict: false })).errorCode).toBe(
      ErrorCode.UNSUPPORTED_VERSION,
    );
    expect(
      (
        await call(48, 0, {
          components: [
            { entityType: 'user', matchType: 2, match: null },
            { entityType: 'ip', matchType: 2, match: null },
          ],
          strict: false,
        })
      ).errorCode,
    ).toBe(ErrorCode.INVALID_REQUEST);
  });
});

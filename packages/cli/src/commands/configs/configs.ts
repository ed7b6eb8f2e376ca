import type { Command } from 'commander';
import { ConfigResourceType, ConfigSource, KafkaError, type Admin, type ClientQuotaFilterComponent, type ConfigEntry } from '@samsa/client';
import { ConfigError, javaDouble, parseTopicConfigs, sanitizeEntityName } from '@samsa/broker';
import { ConfigType, KafkaZk, ZkClient } from '@samsa/zk-paths';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { javaToString } from '../../shared/java-errors.js';
import { ScramConfigError, alterUserScram, describeUserScram, isScramConfig, scramAlterations, scramCredentialsForZk } from './configs-scram.js';
import { commandBuilder, printer, registerCommand, runCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

/**
 * `samsa configs`: Kafka's kafka-configs.sh (ConfigCommand) for topics, brokers, clients and users.
 * With --bootstrap-server, topics and brokers are described with DescribeConfigs and altered with
 * IncrementalAlterConfigs; with --zookeeper the tool itself writes /config/<type>/<name> and a
 * /config/changes notification (Kafka's AdminZkClient.changeConfigs). Client and user quota configs
 * (producer_byte_rate, consumer_byte_rate, request_percentage) go through AlterClientQuotas /
 * DescribeClientQuotas with --bootstrap-server; a (user, client-id) entity is named with
 * `--entity-type users --entity-name u --entity-type clients --entity-name c` or Kafka's
 * `--user u --client c` (`--user-defaults`, `--client-defaults`). Users' SCRAM credentials
 * (`SCRAM-SHA-256=[iterations=8192,password=...]`) go through AlterUserScramCredentials /
 * DescribeUserScramCredentials, or straight to /config/users with --zookeeper (configs-scram.ts).
 */

export type ConfigsIo = CommandIo;

/** readFile reads --command-config. */
export type ConfigsDeps = Pick<AdminToolDeps, 'createAdmin' | 'adminOptions' | 'readFile'>;

export interface RawConfigsOptions {
  bootstrapServer?: string;
  zookeeper?: string;
  /** Repeated for a (user, client-id) entity: `users`, then `clients`. */
  entityType?: string | string[];
  entityName?: string | string[];
  entityDefault?: boolean;
  user?: string;
  userDefaults?: boolean;
  client?: string;
  clientDefaults?: boolean;
  alter?: boolean;
  describe?: boolean;
  all?: boolean;
  addConfig?: string;
  deleteConfig?: string;
  /** Admin client properties file (with --bootstrap-server). */
  commandConfig?: string;
}

const ENTITY_TYPES = ['topics', 'brokers', 'clients', 'users'] as const;
type EntityType = (typeof ENTITY_TYPES)[number];
const DEFAULT_ENTITY = '<default>';
/** Kafka's QuotaConfigs for client-id and user entities. */
const QUOTA_CONFIGS: Readonly<Record<string, 'long' | 'double'>> = { producer_byte_rate: 'long', consumer_byte_rate: 'long', request_percentage: 'double' };

export class ConfigsUsageError extends Error {}

/** `k1=v1,k2=[a,b],k3=v3` (Kafka's parseConfigsToBeAdded: brackets hold list values with commas). */
export function parseAddConfig(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '[') depth++;
    if (ch === ']') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur !== '') parts.push(cur);
  for (const p of parts) {
    const i = p.indexOf('=');
    if (i <= 0) throw new ConfigsUsageError('Invalid entity config: all configs to be added must be in the format "key=val".');
    let v = p.slice(i + 1).trim();
    if (v.startsWith('[') && v.endsWith(']')) v = v.slice(1, -1);
    out[p.slice(0, i).trim()] = v;
  }
  return out;
}

const singular = (t: EntityType) => t.slice(0, -1);
/** DescribeConfigs source ids as Kafka's ConfigEntry.ConfigSource prints them. */
const SOURCE_NAMES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
] as readonly string[];

/** Kafka's describe line: `  k=v sensitive=false synonyms={SOURCE:k=v, ...}`. */
export function formatConfigEntry(e: ConfigEntry): string {
  const synonyms = e.synonyms.map((s) => `${SOURCE_NAMES[s.source] ?? s.source}:${s.name}=${s.value}`).join(', ');
  return `  ${e.name}=${e.value} sensitive=${e.isSensitive} synonyms={${synonyms}}`;
}

/** --entity-type/--entity-name (repeatable) and --user/--client: the entity types and names in order (undefined: no name). */
function entityArgs(raw: RawConfigsOptions): { types: EntityType[]; names: Array<string | undefined> } {
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const types = list(raw.entityType) as EntityType[];
  const names: Array<string | undefined> = list(raw.entityName);
  if (raw.entityDefault) names.push(DEFAULT_ENTITY);
  if (raw.user !== undefined || raw.userDefaults) {
    types.unshift('users');
    names.unshift(raw.userDefaults ? DEFAULT_ENTITY : raw.user);
  }
  if (raw.client !== undefined || raw.clientDefaults) {
    types.push('clients');
    names.push(raw.clientDefaults ? DEFAULT_ENTITY : raw.client);
  }
  if (types.length === 0) throw new ConfigsUsageError('--entity-type must be specified');
  for (const t of types) if (!ENTITY_TYPES.includes(t)) throw new ConfigsUsageError(`--entity-type must be one of ${ENTITY_TYPES.join(', ')}`);
  if (names.length > types.length) throw new ConfigsUsageError('More entity names specified than entity types');
  if (types.length > 1) {
    const pair = types.join(',');
    if (pair !== 'users,clients' && pair !== 'clients,users') throw new ConfigsUsageError('Only a (users, clients) pair of entity types can be combined');
  }
  return { types, names: types.map((_, i) => names[i]) };
}

export async function executeConfigsCommand(raw: RawConfigsOptions, io: ConfigsIo, deps: ConfigsDeps = {}): Promise<number> {
  const println = printer(io);
  try {
    const { types, names } = entityArgs(raw);
    const type = types[0]!;
    if ((raw.bootstrapServer === undefined) === (raw.zookeeper === undefined))
      throw new ConfigsUsageError('Exactly one of --bootstrap-server or --zookeeper must be specified');
    if (!!raw.alter === !!raw.describe) throw new ConfigsUsageError('Command must include exactly one action: --describe, --alter');
    if (raw.entityName !== undefined && raw.entityDefault && types.length === 1)
      throw new ConfigsUsageError('--entity-name and --entity-default cannot be used together');
    if (raw.entityDefault && type === 'topics') throw new ConfigsUsageError('--entity-default is not supported for topics');
    if (raw.alter && names.some((n) => n === undefined)) throw new ConfigsUsageError('--entity-name or --entity-default must be specified with --alter');
    if (raw.alter && raw.addConfig === undefined && raw.deleteConfig === undefined)
      throw new ConfigsUsageError('At least one of --add-config or --delete-config must be specified with --alter');
    const add = raw.addConfig !== undefined ? parseAddConfig(raw.addConfig) : {};
    const del =
      raw.deleteConfig !== undefined
        ? raw.deleteConfig
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : [];
    const quotaEntity = types.includes('users') || types.includes('clients');
    if (raw.zookeeper !== undefined) {
      // a (user, client-id) entity is users/<user>/clients/<client-id>
      // user and client-id names are sanitized in ZooKeeper (Kafka's Sanitizer); <default> stays
      const zk = (n: string | undefined) => (n === undefined || n === DEFAULT_ENTITY ? n : sanitizeEntityName(n));
      const zname =
        types.length === 2
          ? `${zk(names[types.indexOf('users')]) ?? ''}/clients/${zk(names[types.indexOf('clients')]) ?? ''}`
          : quotaEntity
            ? zk(names[0])
            : names[0];
      if (types.length === 2 && names.some((n) => n === undefined))
        throw new ConfigsUsageError('--entity-name or --entity-default must be specified for both users and clients');
      // ConfigCommand.preProcessScramCredentials: a user's SCRAM keys become stored credentials
      const zadd = raw.alter && types.length === 1 && type === 'users' ? scramCredentialsForZk(add) : add;
      return await viaZookeeper(raw.zookeeper, types.length === 2 ? 'users' : type, zname, raw.alter ? { add: zadd, del } : null, println);
    }
    // a users --alter changes quotas or SCRAM credentials, never both (ConfigCommand's checks)
    const scram =
      raw.alter && quotaEntity ? scramAlterations(types, names[0] === DEFAULT_ENTITY ? undefined : names[0], add, del, (k) => k in QUOTA_CONFIGS) : undefined;
    const scramUser = scram && (scram.upserts.length > 0 || scram.deletes.length > 0) ? names[0] : undefined;
    const admin = openAdmin(
      { bootstrapServers: raw.bootstrapServer!, clientId: 'samsa-configs', defaultApiTimeoutMs: 30_000, requestTimeoutMs: 15_000 },
      deps,
      readCommandConfig(raw.commandConfig, fileReader(deps)),
    );
    if (scramUser !== undefined) {
      try {
        await alterUserScram(admin, scramUser, scram!);
      } finally {
        await admin.close().catch(() => undefined);
      }
      println(`Completed updating config for user ${scramUser}.`);
      return 0;
    }
    if (quotaEntity) return await quotasViaBootstrap(admin, types, names, raw.alter ? { add, del } : null, println);
    const name = names[0];
    try {
      const rtype = type === 'topics' ? ConfigResourceType.Topic : ConfigResourceType.Broker;
      const resName = name === DEFAULT_ENTITY ? '' : name;
      if (raw.alter) {
        await admin.incrementalAlterConfigs([
          {
            type: rtype,
            name: resName!,
            configs: [
              ...Object.entries(add).map(([k, v]) => ({ name: k, value: v, op: 'SET' as const })),
              ...del.map((k) => ({ name: k, value: null, op: 'DELETE' as const })),
            ],
          },
        ]);
        println(
          name === DEFAULT_ENTITY
            ? `Completed updating default config for ${type} in the cluster.`
            : `Completed updating config for ${singular(type)} ${name}.`,
        );
        return 0;
      }
      const names =
        name !== undefined
          ? [name]
          : type === 'topics'
            ? (await admin.listTopics()).sort()
            : (await admin.describeCluster()).brokers.map((b) => String(b.nodeId)).sort();
      for (const n of names) {
        const [res] = await admin.describeConfigs([{ type: rtype, name: n === DEFAULT_ENTITY ? '' : n }], { includeSynonyms: true });
        const wanted =
          type === 'topics'
            ? ConfigSource.DynamicTopicConfig
            : n === DEFAULT_ENTITY
              ? ConfigSource.DynamicDefaultBrokerConfig
              : ConfigSource.DynamicBrokerConfig;
        println(
          n === DEFAULT_ENTITY ? `Default configs for ${type} in the cluster are:` : `${raw.all ? 'All' : 'Dynamic'} configs for ${singular(type)} ${n} are:`,
        );
        for (const e of res!.entries) if (raw.all || e.source === wanted) println(formatConfigEntry(e));
      }
      return 0;
    } finally {
      await admin.close().catch(() => undefined);
    }
  } catch (err) {
    if (err instanceof ConfigsUsageError || err instanceof ScramConfigError) {
      io.err(`${err.message}\n`);
      return 1;
    }
    const first = err instanceof KafkaError ? err : (err as { errors?: Map<string, KafkaError> }).errors?.values().next().value;
    if (first instanceof KafkaError) {
      io.err(`Error while executing config command with args '...'\njava.util.concurrent.ExecutionException: ${javaToString(first)}\n`);
      return 1;
    }
    io.err(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** Validates a client/user quota config (Kafka's QuotaConfigs: longs and a double). */
function validateQuotas(config: Readonly<Record<string, string>>): void {
  for (const [k, v] of Object.entries(config)) {
    const t = QUOTA_CONFIGS[k];
    if (!t) throw new ConfigsUsageError(`Invalid config(s): ${k}`);
    const ok = t === 'long' ? /^\d+$/.test(v) : Number.isFinite(Number(v)) && Number(v) >= 0 && v.trim() !== '';
    if (!ok) throw new ConfigsUsageError(`Invalid value ${v} for configuration ${k}: Not a number of type ${t.toUpperCase()}`);
  }
}

async function viaZookeeper(
  connect: string,
  type: EntityType,
  name: string | undefined,
  change: { add: Record<string, string>; del: string[] } | null,
  println: (s: string) => void,
): Promise<number> {
  const zk = await ZkClient.connect({ connectString: connect, sessionTimeoutMs: 30_000, connectionTimeoutMs: 30_000 });
  try {
    const kzk = new KafkaZk(zk);
    const ztype = { topics: ConfigType.Topic, brokers: ConfigType.Broker, clients: ConfigType.Client, users: ConfigType.User }[type];
    if (change) {
      if (type === 'topics' && !(await kzk.topicExists(name!))) throw new ConfigsUsageError(`Topic ${name} does not exist`);
      const next = { ...(await kzk.getEntityConfig(ztype, name!)), ...change.add };
      for (const k of change.del) {
        if (!(k in next)) throw new ConfigsUsageError(`Invalid config(s): ${k}`);
        delete next[k];
      }
      if (type === 'topics') {
        try {
          parseTopicConfigs(next);
        } catch (err) {
          if (err instanceof ConfigError) throw new ConfigsUsageError(err.message);
          throw err;
        }
      }
      if (type === 'clients' || type === 'users')
        validateQuotas(Object.fromEntries(Object.entries(next).filter(([k]) => !(type === 'users' && isScramConfig(k)))));
      await kzk.changeEntityConfig(ztype, name!, next);
      println(`Completed updating config for entity: ${singular(type)} '${name}'.`);
      return 0;
    }
    const names = name !== undefined ? [name] : await zk.getChildren(`/config/${ztype}`).catch(() => [] as string[]);
    for (const n of names) {
      const c = await kzk.getEntityConfig(ztype, n);
      println(
        `Configs for ${singular(type)} '${n}' are ${Object.entries(c)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`,
      );
    }
    return 0;
  } finally {
    await zk.close();
  }
}

/** commander: a repeatable option; one value stays a string, repeats become an array. */
function collect(v: string, prev: string | string[] | undefined): string | string[] {
  return prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
}

const QUOTA_ENTITY_TYPE = { users: 'user', clients: 'client-id' } as const;

/**
 * Client and user quotas through AlterClientQuotas / DescribeClientQuotas (Kafka's ConfigCommand
 * alterQuotaConfigs / describeQuotaConfigs): --delete-config keys must be set, values must parse
 * as numbers; describe filters strictly on the entity types given (a type without a name matches
 * every entity of it) and prints `Quota configs for client-id 'x' are k=v, ...`.
 */
async function quotasViaBootstrap(
  admin: Admin,
  types: EntityType[],
  names: Array<string | undefined>,
  change: { add: Record<string, string>; del: string[] } | null,
  println: (s: string) => void,
): Promise<number> {
  try {
    const components: ClientQuotaFilterComponent[] = types.map((t, i) => {
      const entityType = QUOTA_ENTITY_TYPE[t as 'users' | 'clients'];
      const n = names[i];
      return n === undefined
        ? { entityType, match: 'specified' as const }
        : n === DEFAULT_ENTITY
          ? { entityType, match: 'default' as const }
          : { entityType, match: n };
    });
    if (change) {
      const [current] = await admin.describeClientQuotas(components, { strict: true });
      const invalid = change.del.filter((k) => !(current && k in current.values));
      if (invalid.length > 0) throw new ConfigsUsageError(`Invalid config(s): ${invalid.join(',')}`);
      const ops = [
        ...Object.entries(change.add).map(([key, v]) => {
          const value = Number(v);
          if (v.trim() === '' || !Number.isFinite(value)) throw new ConfigsUsageError(`Cannot parse quota configuration value for ${key}: ${v}`);
          return { key, value };
        }),
        ...change.del.map((key) => ({ key, value: null })),
      ];
      const entity = Object.fromEntries(types.map((t, i) => [QUOTA_ENTITY_TYPE[t as 'users' | 'clients'], names[i] === DEFAULT_ENTITY ? null : names[i]!]));
      await admin.alterClientQuotas([{ entity, ops }]);
      println(
        names[0] === DEFAULT_ENTITY
          ? `Completed updating default config for ${types[0]} in the cluster.`
          : `Completed updating config for ${singular(types[0]!)} ${names[0]}.`,
      );
      return 0;
    }
    for (const q of await admin.describeClientQuotas(components, { strict: true })) {
      const part = (key: 'user' | 'client-id', label: string) =>
        key in q.entity ? [q.entity[key] === null ? `the default ${label}` : `${label} '${q.entity[key]}'`] : [];
      const entityStr = [...part('user', 'user-principal'), ...part('client-id', 'client-id')].join(', ');
      const values = Object.entries(q.values)
        .map(([k, v]) => `${k}=${javaDouble(v)}`)
        .join(', ');
      println(`Quota configs for ${entityStr} are ${values}`);
    }
    // SCRAM credentials only for users alone, not for the default user (ConfigCommand)
    if (!types.includes('clients') && !names.includes(DEFAULT_ENTITY)) await describeUserScram(admin, names[0], println);
    return 0;
  } finally {
    await admin.close().catch(() => undefined);
  }
}

function defineConfigsOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <host:port>', 'The Kafka server to connect to.')
    .option('--zookeeper <connect>', 'The ZooKeeper connection string (host:port[/chroot]); the tool writes /config itself.')
    .option('--entity-type <type>', 'Type of entity (topics/clients/users/brokers); users then clients for a (user, client-id) entity', collect)
    .option('--entity-name <name>', 'Name of entity (topic name/client id/user principal name/broker id)', collect)
    .option('--user <user-principal>', "The user's principal name (same as --entity-type users --entity-name <user-principal>)")
    .option('--user-defaults', 'The config defaults for all users (same as --entity-type users --entity-default)')
    .option('--client <client-id>', "The client's id (same as --entity-type clients --entity-name <client-id>)")
    .option('--client-defaults', 'The config defaults for all clients (same as --entity-type clients --entity-default)')
    .option('--entity-default', 'Default entity name for clients/users/brokers (applies to corresponding entity type in command line)')
    .option('--alter', 'Alter the configuration for the entity.')
    .option('--describe', 'List configs for the given entity.')
    .option('--all', 'List all configs for the given entity, including static configs if available.')
    .option(
      '--add-config <configs>',
      "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.",
    )
    .option('--delete-config <names>', "config keys to remove 'k1,k2'")
    .option(
      '--command-config <file>',
      'Property file containing configs to be passed to Admin Client. This is used only with --bootstrap-server option for describing and altering broker configs.',
    );
}

const configsCommand = (deps: ConfigsDeps): CommandBuilder =>
  commandBuilder(
    'configs',
    'Add/Remove entity config for a topic, client, user or broker (kafka-configs.sh).',
    defineConfigsOptions,
    (raw: RawConfigsOptions, io) => executeConfigsCommand(raw, io, deps),
  );

/** Runs `samsa configs <argv…>` writing to `io`; resolves with the exit code. */
export function runConfigsCommand(argv: readonly string[], io: ConfigsIo, deps: ConfigsDeps = {}): Promise<number> {
  return runCommand(configsCommand(deps), argv, io);
}

export function registerConfigsCommand(program: Command, deps: ConfigsDeps = {}): void {
  registerCommand(program, configsCommand(deps));
}

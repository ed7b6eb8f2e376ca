import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import {
  AclOperation,
  AclPatternType,
  AclPermissionType,
  AclResourceType,
  CLUSTER_RESOURCE_NAME,
  SUPPORTED_ACL_OPERATIONS,
  accessControlEntryToString,
  aclOperationName,
  aclPatternTypeName,
  aclResourceTypeName,
  parseAclOperation,
  resourcePatternToString,
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  type ResourcePattern,
} from '@samsa/protocol';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { commandBuilder, errorMessage, printer, registerCommand, runCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

/**
 * `samsa acls`: Kafka's kafka-acls.sh (AclCommand) through the Admin API: --add, --remove and
 * --list of ACLs on topics, groups, the cluster and transactional ids, printed as Kafka prints them
 * ("Current ACLs for resource `ResourcePattern(...)`: ").
 */

export type AclsIo = CommandIo;
export type AclsDeps = AdminToolDeps;

export interface RawAclsOptions {
  bootstrapServer?: string;
  commandConfig?: string;
  add?: boolean;
  remove?: boolean;
  list?: boolean;
  force?: boolean;
  allowPrincipal?: string[];
  denyPrincipal?: string[];
  allowHost?: string[];
  denyHost?: string[];
  operation?: string[];
  topic?: string[];
  group?: string[];
  cluster?: boolean;
  transactionalId?: string[];
  resourcePatternType?: string;
  producer?: boolean;
  consumer?: boolean;
  idempotent?: boolean;
}

export class AclsUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AclsUsageError';
  }
}

/** Operations Kafka accepts per resource type (AclCommand.ResourceToAclOperations): the supported ones and All. */
const acceptedOperations = (resourceType: number): readonly AclOperation[] => [
  ...(SUPPORTED_ACL_OPERATIONS[resourceType as AclResourceType] ?? []),
  AclOperation.ALL,
];

const PATTERN_TYPES: Record<string, AclPatternType> = {
  literal: AclPatternType.LITERAL,
  prefixed: AclPatternType.PREFIXED,
  any: AclPatternType.ANY,
  match: AclPatternType.MATCH,
};

/** The resource pattern filters of --topic/--group/--cluster/--transactional-id, with --resource-pattern-type. */
export function resourceFilters(raw: RawAclsOptions): Array<AclBindingFilter['patternFilter']> {
  const pt = raw.resourcePatternType === undefined ? AclPatternType.LITERAL : PATTERN_TYPES[raw.resourcePatternType.toLowerCase()];
  if (pt === undefined) throw new AclsUsageError(`Invalid --resource-pattern-type ${raw.resourcePatternType}: literal, prefixed, any or match`);
  const out: Array<AclBindingFilter['patternFilter']> = [];
  for (const name of raw.topic ?? []) out.push({ resourceType: AclResourceType.TOPIC, name, patternType: pt });
  for (const name of raw.group ?? []) out.push({ resourceType: AclResourceType.GROUP, name, patternType: pt });
  if (raw.cluster) out.push({ resourceType: AclResourceType.CLUSTER, name: CLUSTER_RESOURCE_NAME, patternType: pt });
  for (const name of raw.transactionalId ?? []) out.push({ resourceType: AclResourceType.TRANSACTIONAL_ID, name, patternType: pt });
  return out;
}

/** The entries of --allow-principal/--deny-principal × hosts × operations (AclCommand.getAcls). */
export function entries(raw: RawAclsOptions): AccessControlEntry[] {
  const ops = (raw.operation ?? ['All']).map((o) => {
    const op = parseAclOperation(o.trim());
    if (op === undefined || op === AclOperation.ANY || op === AclOperation.UNKNOWN) throw new AclsUsageError(`Invalid operation: ${o}`);
    return op;
  });
  const out: AccessControlEntry[] = [];
  const add = (principals: string[] | undefined, hosts: string[] | undefined, permissionType: AclPermissionType) => {
    for (const principal of principals ?? []) {
      if (!/^[^:]+:.+$/.test(principal)) throw new AclsUsageError(`Invalid principal ${principal}: expected <principalType>:<name>, e.g. User:alice`);
      for (const host of hosts && hosts.length > 0 ? hosts : ['*']) for (const operation of ops) out.push({ principal, host, operation, permissionType });
    }
  };
  add(raw.allowPrincipal, raw.allowHost, AclPermissionType.ALLOW);
  add(raw.denyPrincipal, raw.denyHost, AclPermissionType.DENY);
  return out;
}

type PatternFilter = AclBindingFilter['patternFilter'];

/**
 * The ACLs to add or remove per resource (AclCommand.getResourceToAcls): --operation on every
 * resource, or the --producer / --consumer convenience sets — producer: Write, Describe, Create on
 * topics, Write, Describe on transactional ids, IdempotentWrite on the cluster with --idempotent;
 * consumer: Read, Describe on topics, Read on groups.
 */
export function resourceToAcls(raw: RawAclsOptions): Array<{ filter: PatternFilter; aces: AccessControlEntry[] }> {
  const filters = resourceFilters(raw);
  if (!raw.producer && !raw.consumer) {
    const aces = entries(raw);
    return filters.map((filter) => ({ filter, aces }));
  }
  if (raw.operation?.length || raw.denyPrincipal?.length || raw.denyHost?.length) {
    throw new AclsUsageError('Option "[producer]" or "[consumer]" can\'t be used with option "[operation]", "[deny-principal]" or "[deny-host]"');
  }
  if (raw.producer && !raw.topic?.length && !raw.transactionalId?.length) {
    throw new AclsUsageError('With --producer you must specify a --topic or a --transactional-id');
  }
  if (raw.consumer && (!raw.topic?.length || !raw.group?.length || raw.cluster || raw.transactionalId?.length)) {
    throw new AclsUsageError('With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.');
  }
  const withOps = (ops: string[]) => entries({ ...raw, operation: ops });
  const out: Array<{ filter: PatternFilter; aces: AccessControlEntry[] }> = [];
  const add = (filter: PatternFilter, ops: string[]) => {
    const existing = out.find(
      (e) => e.filter.resourceType === filter.resourceType && e.filter.name === filter.name && e.filter.patternType === filter.patternType,
    );
    const aces = withOps(ops);
    if (existing)
      existing.aces.push(...aces.filter((a) => !existing.aces.some((b) => b.principal === a.principal && b.host === a.host && b.operation === a.operation)));
    else out.push({ filter, aces });
  };
  for (const f of filters) {
    if (f.resourceType === AclResourceType.TOPIC) {
      if (raw.producer) add(f, ['Write', 'Describe', 'Create']);
      if (raw.consumer) add(f, ['Read', 'Describe']);
    } else if (f.resourceType === AclResourceType.GROUP) {
      if (raw.consumer) add(f, ['Read']);
    } else if (f.resourceType === AclResourceType.TRANSACTIONAL_ID) {
      if (raw.producer) add(f, ['Write', 'Describe']);
    }
  }
  if (raw.producer && raw.idempotent) {
    add({ resourceType: AclResourceType.CLUSTER, name: CLUSTER_RESOURCE_NAME, patternType: AclPatternType.LITERAL }, ['IdempotentWrite']);
  }
  return out;
}

/** `ResourcePatternFilter(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`. */
function filterToString(f: AclBindingFilter['patternFilter']): string {
  return `ResourcePatternFilter(resourceType=${aclResourceTypeName(f.resourceType)}, name=${f.name}, patternType=${aclPatternTypeName(f.patternType)})`;
}

/** Kafka's block: "<title> `<resource>`: \n \t(acl)\n\t(acl) \n" then a newline. */
function aclBlock(title: string, resource: string, acls: readonly AccessControlEntry[]): string {
  return `${title} \`${resource}\`: \n ${acls.map((a) => `\t${accessControlEntryToString(a)}`).join('\n')} \n`;
}

/** Groups bindings by resource pattern, in first-seen order. */
export function groupByResource(bindings: readonly AclBinding[]): Array<{ pattern: ResourcePattern; acls: AccessControlEntry[] }> {
  const m = new Map<string, { pattern: ResourcePattern; acls: AccessControlEntry[] }>();
  for (const b of bindings) {
    const k = resourcePatternToString(b.pattern);
    const g = m.get(k) ?? { pattern: b.pattern, acls: [] };
    g.acls.push(b.entry);
    m.set(k, g);
  }
  return [...m.values()];
}

const ANY_ENTRY: AclBindingFilter['entryFilter'] = { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY };
const ANY_PATTERN: AclBindingFilter['patternFilter'] = { resourceType: AclResourceType.ANY, name: null, patternType: AclPatternType.ANY };

async function confirm(io: CommandIo, question: string): Promise<boolean> {
  io.out(`${question}\n`);
  const input = io.input ?? process.stdin;
  const rl = createInterface({ input });
  try {
    const line = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    return line.trim().toLowerCase() === 'y';
  } finally {
    rl.close();
  }
}

export async function executeAclsCommand(raw: RawAclsOptions, io: AclsIo, deps: AclsDeps = {}): Promise<number> {
  const println = printer(io);
  const fail = (message: string) => {
    io.err(`${message}\n`);
    return 1;
  };
  const actions = [raw.add, raw.remove, raw.list].filter(Boolean).length;
  if (actions !== 1) return fail('Command must include exactly one action: --list, --add, --remove.');
  if (raw.bootstrapServer === undefined) return fail('Missing required argument "[bootstrap-server]"');
  let filters: Array<AclBindingFilter['patternFilter']>;
  let perResource: Array<{ filter: PatternFilter; aces: AccessControlEntry[] }>;
  let props: Record<string, string>;
  let admin: ReturnType<typeof openAdmin>;
  try {
    if ((raw.producer || raw.consumer) && !raw.add && !raw.remove) throw new AclsUsageError('--producer and --consumer are only valid with --add or --remove.');
    perResource = resourceToAcls(raw);
    filters = raw.producer || raw.consumer ? perResource.map((e) => e.filter) : resourceFilters(raw);
    props = readCommandConfig(raw.commandConfig, fileReader(deps));
    if (raw.add) {
      if (filters.length === 0)
        throw new AclsUsageError('You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --transactional-id <id>');
      if (filters.some((f) => f.patternType !== AclPatternType.LITERAL && f.patternType !== AclPatternType.PREFIXED)) {
        throw new AclsUsageError('A --resource-pattern-type of any or match is only valid with --list and --remove.');
      }
      if (perResource.every((e) => e.aces.length === 0))
        throw new AclsUsageError('You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.');
      for (const { filter: f, aces } of perResource) {
        const supported = acceptedOperations(f.resourceType);
        if (aces.some((a) => !supported.includes(a.operation))) {
          throw new AclsUsageError(`ResourceType ${aclResourceTypeName(f.resourceType)} only supports operations ${supported.map(aclOperationName).join(',')}`);
        }
      }
    }
    if (raw.remove && filters.length === 0)
      throw new AclsUsageError('You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --transactional-id <id>');
    admin = openAdmin({ bootstrapServers: raw.bootstrapServer, clientId: 'samsa-acls', defaultApiTimeoutMs: 60_000, requestTimeoutMs: 30_000 }, deps, props);
  } catch (err) {
    return fail(errorMessage(err));
  }
  const list = async () => {
    const patterns = filters.length > 0 ? filters : [ANY_PATTERN];
    const found: AclBinding[] = [];
    for (const p of patterns) found.push(...(await admin.describeAcls({ patternFilter: p, entryFilter: ANY_ENTRY })));
    for (const g of groupByResource(found)) println(aclBlock('Current ACLs for resource', resourcePatternToString(g.pattern), g.acls));
  };
  try {
    if (raw.add) {
      const bindings: AclBinding[] = [];
      for (const { filter: f, aces } of perResource) {
        const pattern = { resourceType: f.resourceType, name: f.name!, patternType: f.patternType } as ResourcePattern;
        println(aclBlock('Adding ACLs for resource', resourcePatternToString(pattern), aces));
        for (const entry of aces) bindings.push({ pattern, entry });
      }
      await admin.createAcls(bindings);
      await list();
    } else if (raw.remove) {
      for (const { filter: f, aces } of perResource) {
        const question =
          aces.length === 0
            ? `Are you sure you want to delete all ACLs for resource filter \`${filterToString(f)}\`? (y/n)`
            : `Are you sure you want to remove ACLs: \n ${aces.map((a) => `\t${accessControlEntryToString(a)}`).join('\n')} \n from resource filter \`${filterToString(f)}\`? (y/n)`;
        if (!raw.force && !(await confirm(io, question))) continue;
        const entryFilters = aces.length === 0 ? [ANY_ENTRY] : aces.map((a) => ({ ...a }));
        await admin.deleteAcls(entryFilters.map((entryFilter) => ({ patternFilter: f, entryFilter })));
      }
      await list();
    } else {
      await list();
    }
    return 0;
  } catch (err) {
    return fail(`Error while executing ACL command: ${errorMessage(err)}`);
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/** commander: a repeatable option collected into an array. */
const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

function defineAclsOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <host:port>', 'REQUIRED: A list of host/port pairs to use for establishing the connection to the Kafka cluster.')
    .option('--command-config <file>', 'A property file containing configs to be passed to Admin Client.')
    .option('--add', 'Indicates you are trying to add ACLs.')
    .option('--remove', 'Indicates you are trying to remove ACLs.')
    .option('--list', 'List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource.')
    .option('--force', 'Assume Yes to all queries and do not prompt.')
    .option('--allow-principal <principal>', 'principal is in principalType:name format. Repeatable.', collect)
    .option('--deny-principal <principal>', 'principal is in principalType:name format. Repeatable.', collect)
    .option('--allow-host <host>', 'Host from which principals listed in --allow-principal will have access; default: all hosts (*).', collect)
    .option('--deny-host <host>', 'Host from which principals listed in --deny-principal will be denied access; default: all hosts (*).', collect)
    .option(
      '--operation <operation>',
      'Operation that is being allowed or denied (Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, All). Repeatable; default All.',
      collect,
    )
    .option('--topic <topic>', 'topic to which ACLs should be added or removed. A value of * indicates ACL should apply to all topics. Repeatable.', collect)
    .option(
      '--group <group>',
      'Consumer Group to which the ACLs should be added or removed. A value of * indicates the ACLs should apply to all groups. Repeatable.',
      collect,
    )
    .option('--cluster', 'Add/Remove cluster ACLs.')
    .option(
      '--transactional-id <id>',
      'The transactionalId to which ACLs should be added or removed. A value of * indicates the ACLs should apply to all transactionalIds. Repeatable.',
      collect,
    )
    .option(
      '--producer',
      'Convenience option to add/remove ACLs for producer role: Write, Describe and Create on topics (Write, Describe on transactional ids).',
    )
    .option('--consumer', 'Convenience option to add/remove ACLs for consumer role: Read and Describe on topics, Read on groups.')
    .option('--idempotent', 'Enable idempotence for the producer: with --producer, adds IdempotentWrite on the cluster.')
    .option(
      '--resource-pattern-type <type>',
      'The type of the resource pattern or pattern filter: literal or prefixed when adding; literal, prefixed, any or match for --list and --remove. Default: literal.',
    );
}

const aclsCommand = (deps: AclsDeps): CommandBuilder =>
  commandBuilder('acls', 'Add, remove and list ACLs (kafka-acls.sh).', defineAclsOptions, (raw: RawAclsOptions, io) => executeAclsCommand(raw, io, deps));

/** Runs `samsa acls <argv…>` writing to `io`; resolves with the exit code. */
export function runAclsCommand(argv: readonly string[], io: AclsIo, deps: AclsDeps = {}): Promise<number> {
  return runCommand(aclsCommand(deps), argv, io);
}

export function registerAclsCommand(program: Command, deps: AclsDeps = {}): void {
  registerCommand(program, aclsCommand(deps));
}

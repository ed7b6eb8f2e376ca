import type { Command } from 'commander';
import {
  type Admin,
  BatchError,
  CONSUMER_PROTOCOL_TYPE,
  KafkaError,
  TopicPartitionMap,
  isConsumerGroupListing,
  topicPartitionKey,
  type GroupDescription,
  type ListOffsetsRequest,
  type OffsetSpec,
  type TopicDescription,
  type TopicPartition,
} from '@samsa/client';
import {
  ConsumerGroupCommandError,
  buildOffsetRows,
  computeResetOffsets,
  formatDeleteGroups,
  formatDeleteOffsets,
  formatGroupStates,
  formatMembers,
  formatOffsets,
  formatResetCsv,
  formatResetOffsets,
  formatState,
  groupStateNotice,
  lookupsNeeded,
  parseResetPlan,
  parseTopicArg,
  topicPartitionMap,
  type NewOffset,
  type OffsetDeletion,
} from './consumer-groups-format.js';
import {
  ConsumerGroupsUsageError,
  DESCRIPTION,
  NO_EXECUTE_WARNING,
  defineConsumerGroupsOptions,
  validateConsumerGroupsOptions,
  type ConsumerGroupsOptions,
  type RawConsumerGroupsOptions,
} from './consumer-groups-options.js';
import { javaToString } from '../../shared/java-errors.js';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { commandBuilder, noOptionsGiven, printUsage, registerCommand, runCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

/**
 * `samsa consumer-groups`: Kafka's kafka-consumer-groups.sh (ConsumerGroupCommand) against
 * --bootstrap-server: --list, --describe (offsets / --members / --state), --delete,
 * --delete-offsets and --reset-offsets, with Kafka's flags and output. Exit code 1 on usage
 * errors and whenever an `Error:` line is printed (Kafka exits 0 for some of those).
 */

export type ConsumerGroupsIo = CommandIo;

/** readFile reads --command-config and --from-file. */
export interface ConsumerGroupsDeps extends AdminToolDeps {
  /** Clock for --by-duration. */
  now?: () => number;
}

const consumerGroupsCommand = (deps: ConsumerGroupsDeps): CommandBuilder =>
  commandBuilder(
    'consumer-groups',
    "List, describe, delete consumer groups and reset their offsets (Kafka's kafka-consumer-groups.sh)",
    defineConsumerGroupsOptions,
    (raw: RawConsumerGroupsOptions, io, cmd) => executeConsumerGroupsCommand(raw, io, deps, cmd),
  );

/** Runs `samsa consumer-groups <argv…>` writing to `io`; resolves with the exit code. */
export function runConsumerGroupsCommand(argv: readonly string[], io: ConsumerGroupsIo, deps: ConsumerGroupsDeps = {}): Promise<number> {
  return runCommand(consumerGroupsCommand(deps), argv, io);
}

/** Adds `samsa consumer-groups` to the program (exit code through process.exitCode). */
export function registerConsumerGroupsCommand(program: Command, deps: ConsumerGroupsDeps = {}): void {
  registerCommand(program, consumerGroupsCommand(deps));
}

/** Kafka's rendering of a failure's message: Kafka errors as `class: message`. */
function errorText(err: unknown): string {
  const e = err instanceof BatchError && err.errors.size === 1 ? [...err.errors.values()][0] : err;
  if (e instanceof KafkaError) return javaToString(e);
  return e instanceof Error ? e.message : String(e);
}

/** Validates the options and runs the action; returns the exit code. */
export async function executeConsumerGroupsCommand(
  raw: RawConsumerGroupsOptions,
  io: ConsumerGroupsIo,
  deps: ConsumerGroupsDeps = {},
  cmd?: Command,
): Promise<number> {
  if (noOptionsGiven(raw)) return printUsage(io, DESCRIPTION, cmd);
  const usage = (message: string) => {
    io.err(`${message}\n`);
    io.err('Run `samsa consumer-groups --help` for the options.\n');
    return 1;
  };
  let opts: ConsumerGroupsOptions;
  try {
    opts = validateConsumerGroupsOptions(raw);
  } catch (err) {
    if (err instanceof ConsumerGroupsUsageError) return usage(err.message);
    throw err;
  }
  if (opts.warnNoExecute) io.err(`${NO_EXECUTE_WARNING}\n`);
  let admin: Admin | undefined;
  try {
    const read = fileReader(deps);
    // --timeout bounds every admin call, as Kafka's withTimeoutMs
    admin = openAdmin(
      { bootstrapServers: opts.bootstrapServer, clientId: 'samsa-consumer-groups', defaultApiTimeoutMs: opts.timeoutMs },
      deps,
      readCommandConfig(opts.commandConfig, read),
    );
    const service = new ConsumerGroupService(admin, opts, io, deps.now ?? Date.now, read);
    return await service.run();
  } catch (err) {
    if (err instanceof ConsumerGroupsUsageError) return usage(err.message);
    io.out(`\nError: Executing consumer group command failed due to ${errorText(err)}\n`);
    if (err instanceof Error && err.cause !== undefined) io.err(`caused by: ${errorText(err.cause)}\n`);
    return 1;
  } finally {
    await admin?.close().catch(() => undefined);
  }
}

/** ConsumerGroupCommand.ConsumerGroupService: the actions, on an Admin. */
class ConsumerGroupService {
  constructor(
    private readonly admin: Admin,
    private readonly opts: ConsumerGroupsOptions,
    private readonly io: ConsumerGroupsIo,
    private readonly now: () => number,
    private readonly readFile: (path: string) => string,
  ) {}

  private resetPlan: Map<string, NewOffset[]> | undefined;

  run(): Promise<number> {
    switch (this.opts.action) {
      case 'list':
        return this.list();
      case 'describe':
        return this.describe();
      case 'delete':
        return this.deleteGroups();
      case 'delete-offsets':
        return this.deleteOffsets();
      case 'reset-offsets':
        return this.resetOffsets();
    }
  }

  private async consumerGroupIds(): Promise<string[]> {
    return (await this.admin.listGroups()).filter(isConsumerGroupListing).map((g) => g.groupId);
  }

  private async groupIds(): Promise<string[]> {
    return this.opts.allGroups ? this.consumerGroupIds() : this.opts.groups;
  }

  private async list(): Promise<number> {
    if (this.opts.listStates === null) {
      for (const g of await this.consumerGroupIds()) this.io.out(`${g}\n`);
      return 0;
    }
    const states = this.opts.listStates;
    const groups = (await this.admin.listGroups(states.length > 0 ? { states } : {})).filter(isConsumerGroupListing);
    this.io.out(formatGroupStates(groups));
    return 0;
  }

  /** describeConsumerGroups: sorted by group id; groups of another protocol fail as in Kafka's admin. */
  private async describeConsumerGroups(ids: readonly string[]): Promise<GroupDescription[]> {
    if (ids.length === 0) return [];
    const descs = await this.admin.describeGroups(ids);
    for (const d of descs) {
      if (d.protocolType !== CONSUMER_PROTOCOL_TYPE && d.protocolType !== '')
        throw new ConsumerGroupCommandError(`GroupId ${d.groupId} is not a consumer group (${d.protocolType}).`);
    }
    return descs.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  private async describe(): Promise<number> {
    const descs = await this.describeConsumerGroups(await this.groupIds());
    let failed = false;
    for (const d of descs) {
      let table = '';
      let rows = 0;
      if (this.opts.view === 'offsets') {
        const committed = d.state === 'Dead' ? new TopicPartitionMap<bigint>() : await this.committedOffsets(d.groupId);
        const assigned = d.members.flatMap((m) => m.assignment.flatMap((a) => a.partitions.map((partition) => ({ topic: a.topic, partition }))));
        const assignedMap = topicPartitionMap(assigned.map((tp) => [tp, true] as const));
        const partitions = [...assigned, ...[...committed.keys()].filter((tp) => !assignedMap.has(tp.topic, tp.partition))];
        const leo = partitions.length > 0 ? await this.logEndOffsets(partitions) : new TopicPartitionMap<bigint | null>();
        const offsetRows = buildOffsetRows(d, committed, leo);
        rows = offsetRows.length;
        table = formatOffsets(offsetRows);
      } else if (this.opts.view === 'members') {
        rows = d.members.length;
        table = formatMembers(d, this.opts.verbose);
      } else {
        rows = 1;
        table = formatState(d);
      }
      const notice = groupStateNotice(d.groupId, d.state, rows);
      this.io.err(notice.err);
      this.io.out(notice.out);
      failed ||= notice.failed;
      if (notice.print) this.io.out(table);
    }
    return failed ? 1 : 0;
  }

  private async committedOffsets(groupId: string): Promise<TopicPartitionMap<bigint>> {
    return topicPartitionMap((await this.admin.listGroupOffsets(groupId)).map((o) => [o, o.offset] as const));
  }

  /** Descriptions of the topics that exist (missing ones are left out). */
  private async existingTopics(topics: readonly string[]): Promise<Map<string, TopicDescription>> {
    const unique = [...new Set(topics)];
    try {
      return new Map((await this.admin.describeTopics(unique)).map((d) => [d.name, d]));
    } catch (err) {
      if (!(err instanceof BatchError)) throw err;
      const ok = err.succeeded.length > 0 ? await this.admin.describeTopics(err.succeeded) : [];
      return new Map(ok.map((d) => [d.name, d]));
    }
  }

  /** LOG-END-OFFSET of each partition; null where the partition has no leader or does not exist. */
  private async logEndOffsets(partitions: readonly TopicPartition[]): Promise<TopicPartitionMap<bigint | null>> {
    const out = topicPartitionMap<bigint | null>(partitions.map((tp) => [tp, null] as const));
    const topics = await this.existingTopics(partitions.map((p) => p.topic));
    const led = partitions.filter((tp) => topics.get(tp.topic)?.partitions.some((p) => p.partition === tp.partition && p.leader !== null));
    for (const [tp, v] of await this.listOffsetsLenient(led, 'latest')) out.set(tp.topic, tp.partition, v);
    return out;
  }

  /** ListOffsets for `partitions`; those that fail are left out. */
  private async listOffsetsLenient(partitions: readonly TopicPartition[], spec: OffsetSpec): Promise<TopicPartitionMap<bigint>> {
    const reqs: ListOffsetsRequest[] = partitions.map((tp) => ({ topic: tp.topic, partition: tp.partition, spec }));
    if (reqs.length === 0) return new TopicPartitionMap();
    try {
      return topicPartitionMap((await this.admin.listOffsets(reqs)).map((r) => [r, r.offset] as const));
    } catch (err) {
      if (!(err instanceof BatchError)) throw err;
      const out = new TopicPartitionMap<bigint>();
      for (const r of reqs) {
        const one = await this.admin.listOffsets([r]).catch(() => null);
        if (one) out.set(r.topic, r.partition, one[0]!.offset);
      }
      return out;
    }
  }

  private async deleteGroups(): Promise<number> {
    const ids = await this.groupIds();
    const failed = new Map<string, string>();
    let succeeded = ids;
    try {
      await this.admin.deleteGroups(ids);
    } catch (err) {
      if (!(err instanceof BatchError)) throw err;
      for (const [g, e] of err.errors) failed.set(g, javaToString(e));
      succeeded = ids.filter((g) => !failed.has(g));
    }
    this.io.out(formatDeleteGroups(succeeded, failed));
    return failed.size > 0 ? 1 : 0;
  }

  private async deleteOffsets(): Promise<number> {
    const group = this.opts.groups[0]!;
    const results: OffsetDeletion[] = [];
    const partitions: TopicPartition[] = [];
    for (const arg of this.opts.topics) {
      const { topic, partitions: ps } = parseTopicArg(arg);
      if (ps !== null) {
        for (const partition of ps) partitions.push({ topic, partition });
        continue;
      }
      try {
        const [d] = await this.admin.describeTopics([topic]);
        for (const p of d!.partitions) partitions.push({ topic, partition: p.partition });
      } catch (err) {
        results.push({ topic, partition: -1, error: errorText(err) });
      }
    }
    let topLevel: { name: string; message: string } | null = null;
    if (partitions.length > 0) {
      try {
        for (const r of await this.admin.deleteGroupOffsets(group, partitions))
          results.push({ topic: r.topic, partition: r.partition, error: r.error ? javaToString(r.error) : null });
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        topLevel = { name: err.errorName, message: err.message };
        for (const tp of partitions) results.push({ ...tp, error: javaToString(err) });
      }
    }
    this.io.out(formatDeleteOffsets(group, topLevel, results));
    return topLevel !== null || results.some((r) => r.error !== null) ? 1 : 0;
  }

  private async resetOffsets(): Promise<number> {
    const ids = await this.groupIds();
    const descs = ids.length > 0 ? await this.admin.describeGroups(ids) : [];
    const plan = new Map<string, NewOffset[]>();
    let failed = false;
    for (const d of descs) {
      if (d.state === 'Empty' || d.state === 'Dead') {
        plan.set(d.groupId, await this.resetInactiveGroup(d.groupId));
      } else {
        this.io.out(`\nError: Assignments can only be reset if the group '${d.groupId}' is inactive, but the current state is ${d.state}.\n`);
        plan.set(d.groupId, []);
        failed = true;
      }
    }
    if (this.opts.export) this.io.out(`${formatResetCsv(plan, this.opts.groups.length === 1)}\n`);
    else this.io.out(formatResetOffsets(plan));
    return failed ? 1 : 0;
  }

  private async resetInactiveGroup(groupId: string): Promise<NewOffset[]> {
    const scenario = this.opts.scenario!;
    const need = lookupsNeeded(scenario);
    let committed: TopicPartitionMap<bigint> | undefined;
    let partitions: TopicPartition[];
    let requested: TopicPartitionMap<bigint> | undefined;
    if (scenario.kind === 'from-file') {
      this.resetPlan ??= parseResetPlan(this.readFile(scenario.path), this.opts.groups);
      const forGroup = this.resetPlan.get(groupId);
      if (!forGroup) {
        this.io.out(`\nError: No reset plan for group ${groupId} found.\n`);
        return [];
      }
      partitions = forGroup.map((o) => ({ topic: o.topic, partition: o.partition }));
      requested = topicPartitionMap(forGroup.map((o) => [o, o.offset] as const));
    } else if (this.opts.allTopics) {
      committed = await this.committedOffsets(groupId);
      partitions = [...committed.keys()];
    } else {
      partitions = [];
      for (const arg of this.opts.topics) {
        const { topic, partitions: ps } = parseTopicArg(arg);
        if (ps !== null) for (const partition of ps) partitions.push({ topic, partition });
        else for (const p of (await this.admin.describeTopics([topic]))[0]!.partitions) partitions.push({ topic, partition: p.partition });
      }
    }
    await this.checkPartitionsValid(partitions);
    if (need.committed) committed ??= await this.committedOffsets(groupId);
    const strict = async (spec: OffsetSpec) =>
      topicPartitionMap((await this.admin.listOffsets(partitions.map((tp) => ({ ...tp, spec })))).map((r) => [r, r.offset] as const));
    const timestamp = scenario.kind === 'to-datetime' ? scenario.timestamp : scenario.kind === 'by-duration' ? this.now() - scenario.durationMs : 0;
    const r = computeResetOffsets(scenario, partitions, {
      committed: committed ?? new TopicPartitionMap(),
      earliest: need.earliest ? await strict('earliest') : new TopicPartitionMap(),
      latest: need.latest ? await strict('latest') : new TopicPartitionMap(),
      byTimestamp: need.timestamp ? await strict({ timestamp }) : undefined,
      requested,
    });
    this.io.out(r.out);
    this.io.err(r.err);
    if (this.opts.execute && r.offsets.length > 0) await this.admin.alterGroupOffsets(groupId, r.offsets);
    return r.offsets;
  }

  /** GroupOffsetsResetter.checkAllTopicPartitionsValid: every partition exists and has a leader. */
  private async checkPartitionsValid(partitions: readonly TopicPartition[]): Promise<void> {
    if (partitions.length === 0) return;
    const topics = await this.existingTopics(partitions.map((p) => p.topic));
    const info = (tp: TopicPartition) => topics.get(tp.topic)?.partitions.find((p) => p.partition === tp.partition);
    const missing = partitions.filter((tp) => !info(tp));
    if (missing.length > 0) throw new ConsumerGroupCommandError(`The partitions "${missing.map((tp) => topicPartitionKey(tp)).join(',')}" do not exist`);
    const leaderless = partitions.filter((tp) => info(tp)!.leader === null);
    if (leaderless.length > 0)
      throw new ConsumerGroupCommandError(`The partitions "${leaderless.map((tp) => topicPartitionKey(tp)).join(',')}" have no leader`);
  }
}

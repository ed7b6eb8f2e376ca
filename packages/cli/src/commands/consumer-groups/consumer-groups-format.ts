/**
 * kafka-consumer-groups.sh output (ConsumerGroupCommand / GroupOffsetsResetter): the --describe
 * tables (offsets, members, state), --list with states, the --reset-offsets plan and the
 * --delete-offsets report, and the offset arithmetic behind them (lag, the reset scenarios,
 * clamping to [earliest, latest]). Pure functions: the command feeds them what the Admin fetched.
 */
import { TopicPartitionMap, compareTopicPartitions, topicPartitionKey, type GroupDescription, type TopicPartition } from '@samsa/client';
import type { ResetScenario } from './consumer-groups-options.js';
import { ConsumerGroupsUsageError } from './consumer-groups-options.js';

export const MISSING = '-';

const pad = (s: string, n: number) => s.padEnd(n);

/** A TopicPartitionMap of (partition, value) pairs. */
export function topicPartitionMap<V>(entries: Iterable<readonly [TopicPartition, V]>): TopicPartitionMap<V> {
  const m = new TopicPartitionMap<V>();
  for (const [tp, v] of entries) m.set(tp.topic, tp.partition, v);
  return m;
}

/** An error reported as `\nError: <message>` on stdout, exit code 1. */
export class ConsumerGroupCommandError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConsumerGroupCommandError';
  }
}

/** Where formatted output goes: stdout text and stderr text, each already newline-terminated. */
export interface Printed {
  out: string;
  err: string;
  /** An `Error:` line was printed: the command exits 1. */
  failed: boolean;
}

// ---- group state messages ---------------------------------------------------------------------

/**
 * shouldPrintMemberState: Dead → `Error: Consumer group 'g' does not exist.` (stdout), Empty → `has
 * no active members` (stderr), rebalancing → a warning (stderr). The table follows when the group
 * is not Dead and has rows.
 */
export function groupStateNotice(group: string, state: string, rows: number): Printed & { print: boolean } {
  switch (state) {
    case 'Dead':
      return { out: `\nError: Consumer group '${group}' does not exist.\n`, err: '', failed: true, print: false };
    case 'Empty':
      return { out: '', err: `\nConsumer group '${group}' has no active members.\n`, failed: false, print: rows > 0 };
    case 'PreparingRebalance':
    case 'CompletingRebalance':
      return { out: '', err: `\nWarning: Consumer group '${group}' is rebalancing.\n`, failed: false, print: rows > 0 };
    case 'Stable':
      return { out: '', err: '', failed: false, print: rows > 0 };
    default:
      throw new ConsumerGroupCommandError(`Expected a valid consumer group state, but found '${state}'.`);
  }
}

// ---- --describe (offsets) -----------------------------------------------------------------------

export interface PartitionAssignmentRow {
  group: string;
  topic: string | null;
  partition: number | null;
  offset: bigint | null;
  logEndOffset: bigint | null;
  lag: bigint | null;
  consumerId: string;
  host: string;
  clientId: string;
}

/** LAG: log end offset − committed offset, when both are known. */
export function lagOf(offset: bigint | null, logEndOffset: bigint | null): bigint | null {
  return offset === null || offset === -1n || logEndOffset === null ? null : logEndOffset - offset;
}

/**
 * collectGroupsOffsets: one row per assigned partition (members with the most partitions first),
 * then one per committed partition no member owns (`-` consumer, host and client id).
 */
export function buildOffsetRows(
  d: Pick<GroupDescription, 'groupId' | 'members'>,
  committed: TopicPartitionMap<bigint>,
  logEndOffsets: TopicPartitionMap<bigint | null>,
): PartitionAssignmentRow[] {
  const rows: PartitionAssignmentRow[] = [];
  const assigned = new TopicPartitionMap<true>();
  const row = (tp: TopicPartition, consumerId: string, host: string, clientId: string): PartitionAssignmentRow => {
    const offset = committed.get(tp.topic, tp.partition) ?? null;
    const leo = logEndOffsets.get(tp.topic, tp.partition) ?? null;
    return { group: d.groupId, topic: tp.topic, partition: tp.partition, offset, logEndOffset: leo, lag: lagOf(offset, leo), consumerId, host, clientId };
  };
  const members = d.members
    .map((m) => ({ m, tps: m.assignment.flatMap((a) => a.partitions.map((partition) => ({ topic: a.topic, partition }))).sort(compareTopicPartitions) }))
    .filter((x) => x.tps.length > 0)
    // a stable sort: ties keep the broker's member order
    .sort((a, b) => b.tps.length - a.tps.length);
  for (const { m, tps } of members) {
    for (const tp of tps) {
      assigned.set(tp.topic, tp.partition, true);
      rows.push(row(tp, m.memberId, m.host, m.clientId));
    }
  }
  const unassigned = [...committed.keys()].filter((tp) => !assigned.has(tp.topic, tp.partition)).sort(compareTopicPartitions);
  for (const tp of unassigned) rows.push(row(tp, MISSING, MISSING, MISSING));
  return rows;
}

const show = (v: string | number | bigint | null) => (v === null ? MISSING : String(v));

/** printOffsets for one group: `\nGROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID` and the rows. */
export function formatOffsets(rows: readonly PartitionAssignmentRow[]): string {
  let g = 15;
  let t = 15;
  let c = 15;
  let h = 15;
  for (const r of rows) {
    g = Math.max(g, r.group.length);
    t = Math.max(t, (r.topic ?? MISSING).length);
    c = Math.max(c, r.consumerId.length);
    h = Math.max(h, r.host.length);
  }
  const line = (cols: string[]) =>
    `\n${pad(cols[0]!, g)} ${pad(cols[1]!, t)} ${pad(cols[2]!, 10)} ${pad(cols[3]!, 15)} ${pad(cols[4]!, 15)} ${pad(cols[5]!, 15)} ${pad(cols[6]!, c)} ${pad(cols[7]!, h)} ${cols[8]!}`;
  let s = line(['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID']);
  for (const r of rows)
    s += line([r.group, show(r.topic), show(r.partition), show(r.offset), show(r.logEndOffset), show(r.lag), r.consumerId, r.host, r.clientId]);
  return `${s}\n`;
}

// ---- --describe --members -------------------------------------------------------------------------

/** `topic(0,1,2), other(0)`, sorted; `-` without partitions. */
export function assignmentString(assignment: ReadonlyArray<{ topic: string; partitions: readonly number[] }>): string {
  const parts = assignment.filter((a) => a.partitions.length > 0).map((a) => `${a.topic}(${[...a.partitions].sort((x, y) => x - y).join(',')})`);
  return parts.length === 0 ? MISSING : parts.sort().join(', ');
}

/** printMembers for one group (GROUP-INSTANCE-ID only when a member has one; ASSIGNMENT with --verbose). */
export function formatMembers(d: Pick<GroupDescription, 'groupId' | 'members'>, verbose: boolean): string {
  let g = Math.max(15, d.groupId.length);
  let c = 15;
  let gi = 17;
  let h = 15;
  let cl = 15;
  let withInstance = false;
  for (const m of d.members) {
    c = Math.max(c, m.memberId.length);
    gi = Math.max(gi, (m.groupInstanceId ?? '').length);
    h = Math.max(h, m.host.length);
    cl = Math.max(cl, m.clientId.length);
    withInstance ||= !!m.groupInstanceId;
  }
  g = Math.max(g, d.groupId.length);
  const cols = (group: string, id: string, instance: string, host: string, client: string, n: string) =>
    withInstance
      ? `${pad(group, g)} ${pad(id, c)} ${pad(instance, gi)} ${pad(host, h)} ${pad(client, cl)} ${pad(n, 15)} `
      : `${pad(group, g)} ${pad(id, c)} ${pad(host, h)} ${pad(client, cl)} ${pad(n, 15)} `;
  let s = `\n${cols('GROUP', 'CONSUMER-ID', 'GROUP-INSTANCE-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS')}${verbose ? 'ASSIGNMENT' : ''}\n`;
  for (const m of d.members) {
    const n = m.assignment.reduce((k, a) => k + a.partitions.length, 0);
    s += `${cols(d.groupId, m.memberId, m.groupInstanceId ?? '', m.host, m.clientId, String(n))}${verbose ? assignmentString(m.assignment) : ''}\n`;
  }
  return s;
}

// ---- --describe --state ---------------------------------------------------------------------------

/** printStates for one group: `GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS`. */
export function formatState(d: Pick<GroupDescription, 'groupId' | 'coordinator' | 'partitionAssignor' | 'state' | 'members'>): string {
  const coordinator = `${d.coordinator.host}:${d.coordinator.port}  (${d.coordinator.nodeId})`;
  const c = Math.max(25, coordinator.length);
  const g = Math.max(15, d.groupId.length);
  const line = (a: string, b: string, x: string, y: string, z: string) => `\n${pad(a, g)} ${pad(b, c)} ${pad(x, 20)} ${pad(y, 20)} ${z}`;
  const strategy = d.partitionAssignor === '' ? MISSING : d.partitionAssignor;
  return `${line('GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE', '#MEMBERS')}${line(d.groupId, coordinator, strategy, d.state, String(d.members.length))}\n`;
}

// ---- --list --state -------------------------------------------------------------------------------

/** `GROUP STATE` lines (Kafka 3.x printGroupStates). */
export function formatGroupStates(groups: ReadonlyArray<{ groupId: string; state: string | null }>): string {
  const g = groups.reduce((n, x) => Math.max(n, x.groupId.length), 15);
  return [['GROUP', 'STATE'], ...groups.map((x) => [x.groupId, x.state ?? 'Unknown'])].map(([a, b]) => `${pad(a!, g)} ${b!}\n`).join('');
}

// ---- --reset-offsets --------------------------------------------------------------------------------

export interface NewOffset extends TopicPartition {
  offset: bigint;
}

/** printOffsetsToReset: `\nGROUP TOPIC PARTITION NEW-OFFSET` then the rows (sorted), over all groups. */
export function formatResetOffsets(plan: ReadonlyMap<string, readonly NewOffset[]>): string {
  if (plan.size === 0) return '\n';
  let g = 15;
  let t = 15;
  for (const [group, offsets] of plan) {
    g = Math.max(g, group.length);
    for (const o of offsets) t = Math.max(t, o.topic.length);
  }
  const line = (a: string, b: string, c: string, d: string) => `\n${pad(a, g)} ${pad(b, t)} ${pad(c, 10)} ${d}`;
  let s = line('GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET');
  for (const [group, offsets] of plan)
    for (const o of [...offsets].sort(compareTopicPartitions)) s += line(group, o.topic, String(o.partition), String(o.offset));
  return `${s}\n`;
}

/** --export: CSV `topic,partition,offset` (one group asked) or `group,topic,partition,offset`. */
export function formatResetCsv(plan: ReadonlyMap<string, readonly NewOffset[]>, singleGroup: boolean): string {
  let s = '';
  for (const [group, offsets] of plan)
    for (const o of [...offsets].sort(compareTopicPartitions)) s += `${singleGroup ? '' : `${group},`}${o.topic},${o.partition},${o.offset}\n`;
  return s;
}

/** Offsets the scenario needs, fetched by the command. */
export interface OffsetLookups {
  committed: TopicPartitionMap<bigint>;
  earliest: TopicPartitionMap<bigint>;
  latest: TopicPartitionMap<bigint>;
  /** For to-datetime / by-duration: the first offset at or after the timestamp, -1 when none. */
  byTimestamp?: TopicPartitionMap<bigint> | undefined;
  /** For from-file: the offsets of the plan. */
  requested?: TopicPartitionMap<bigint> | undefined;
}

/** What a scenario needs fetched. */
export function lookupsNeeded(s: ResetScenario): { committed: boolean; earliest: boolean; latest: boolean; timestamp: boolean } {
  switch (s.kind) {
    case 'to-offset':
      return { committed: false, earliest: true, latest: true, timestamp: false };
    case 'shift-by':
      return { committed: true, earliest: true, latest: true, timestamp: false };
    case 'to-earliest':
      return { committed: false, earliest: true, latest: false, timestamp: false };
    case 'to-latest':
      return { committed: false, earliest: false, latest: true, timestamp: false };
    case 'to-current':
      return { committed: true, earliest: false, latest: true, timestamp: false };
    case 'to-datetime':
    case 'by-duration':
      return { committed: false, earliest: false, latest: true, timestamp: true };
    case 'from-file':
      return { committed: false, earliest: true, latest: true, timestamp: false };
  }
}

/**
 * A --from-file reset plan (the --export CSV): `topic,partition,offset` lines when one group is
 * asked for (Kafka's old format), else `group,topic,partition,offset`.
 */
export function parseResetPlan(csv: string, groups: readonly string[]): Map<string, NewOffset[]> {
  const lines = csv
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const oldFormat = groups.length === 1 && lines.length > 0 && lines[0]!.split(',').length === 3;
  const plan = new Map<string, NewOffset[]>();
  for (const line of lines) {
    const f = line.split(',');
    const [group, topic, partition, offset] = oldFormat ? [groups[0]!, ...f] : f;
    if (f.length !== (oldFormat ? 3 : 4) || !/^\d+$/.test(partition ?? '') || !/^-?\d+$/.test(offset ?? ''))
      throw new ConsumerGroupCommandError(`Invalid reset plan line '${line}'`);
    const list = plan.get(group!) ?? [];
    list.push({ topic: topic!, partition: Number(partition), offset: BigInt(offset!) });
    plan.set(group!, list);
  }
  return plan;
}

/**
 * The new offsets of `partitions` (GroupOffsetsResetter): --to-offset and --shift-by are clamped to
 * [earliest, latest] (with a WARN each), --to-current keeps the committed offset (latest without
 * one), timestamps without a record fall back to latest (with Kafka's `Warn:` line on stdout).
 * Throws ConsumerGroupsUsageError where Kafka prints the usage (a missing offset, shift without a
 * committed offset).
 */
export function computeResetOffsets(
  s: ResetScenario,
  partitions: readonly TopicPartition[],
  l: OffsetLookups,
): { offsets: NewOffset[]; out: string; err: string } {
  let out = '';
  let err = '';
  const need = (m: TopicPartitionMap<bigint>, tp: TopicPartition, what: string): bigint => {
    const v = m.get(tp.topic, tp.partition);
    if (v === undefined) throw new ConsumerGroupsUsageError(`Error getting ${what} offset of topic partition: ${topicPartitionKey(tp)}`);
    return v;
  };
  const clamp = (tp: TopicPartition, offset: bigint): bigint => {
    const end = need(l.latest, tp, 'ending');
    if (offset > end) {
      err += `WARN New offset (${offset}) is higher than latest offset for topic partition ${topicPartitionKey(tp)}. Value will be set to ${end}.\n`;
      return end;
    }
    const start = need(l.earliest, tp, 'starting');
    if (offset < start) {
      err += `WARN New offset (${offset}) is lower than earliest offset for topic partition ${topicPartitionKey(tp)}. Value will be set to ${start}.\n`;
      return start;
    }
    return offset;
  };
  const offsets = partitions.map((tp) => {
    let offset: bigint;
    switch (s.kind) {
      case 'to-offset':
        offset = clamp(tp, s.offset);
        break;
      case 'from-file':
        offset = clamp(tp, need(l.requested ?? new TopicPartitionMap(), tp, 'requested'));
        break;
      case 'to-earliest':
        offset = need(l.earliest, tp, 'starting');
        break;
      case 'to-latest':
        offset = need(l.latest, tp, 'ending');
        break;
      case 'shift-by': {
        const current = l.committed.get(tp.topic, tp.partition);
        if (current === undefined)
          throw new ConsumerGroupsUsageError(`Cannot shift offset for partition ${topicPartitionKey(tp)} since there is no current committed offset`);
        offset = clamp(tp, current + s.shift);
        break;
      }
      case 'to-current':
        offset = l.committed.get(tp.topic, tp.partition) ?? need(l.latest, tp, 'ending');
        break;
      case 'to-datetime':
      case 'by-duration': {
        const found = l.byTimestamp?.get(tp.topic, tp.partition);
        if (found === undefined) throw new ConsumerGroupsUsageError(`Error getting offset by timestamp of topic partition: ${topicPartitionKey(tp)}`);
        if (found === -1n) {
          out += `\nWarn: Partition ${tp.partition} from topic ${tp.topic} is empty. Falling back to latest known offset.\n`;
          offset = need(l.latest, tp, 'ending');
        } else offset = found;
        break;
      }
    }
    return { topic: tp.topic, partition: tp.partition, offset };
  });
  return { offsets, out, err };
}

/** `topic` or `topic:0,1,2` (GroupOffsetsResetter.parseTopicsWithPartitions for the latter). */
export function parseTopicArg(arg: string): { topic: string; partitions: number[] | null } {
  if (!arg.includes(':')) return { topic: arg, partitions: null };
  const parts = arg.split(':');
  if (parts.length !== 2 || parts[1] === '') throw new ConsumerGroupsUsageError(`Invalid topic arg '${arg}', expected topic name and partitions`);
  const partitions = parts[1]!.split(',').map((p) => {
    if (!/^[-+]?\d+$/.test(p) || Math.abs(Number(p)) > 2147483647)
      throw new ConsumerGroupsUsageError(`Invalid partition '${p}' specified in topic arg '${arg}''`);
    return Number(p);
  });
  return { topic: parts[0]!, partitions };
}

// ---- --delete / --delete-offsets -----------------------------------------------------------------

/** deleteGroups' report. `failed` maps each group that could not be deleted to its error text. */
export function formatDeleteGroups(succeeded: readonly string[], failed: ReadonlyMap<string, string>): string {
  const quoted = (gs: readonly string[]) => gs.map((g) => `'${g}'`).join(', ');
  if (failed.size === 0) return `Deletion of requested consumer groups (${quoted(succeeded)}) was successful.\n`;
  let s = '\nError: Deletion of some consumer groups failed:\n';
  for (const [g, e] of failed) s += `* Group '${g}' could not be deleted due to: ${e}\n`;
  if (succeeded.length > 0) s += `\nThese consumer groups were deleted successfully: ${quoted(succeeded)}\n`;
  return s;
}

export interface OffsetDeletion {
  topic: string;
  /** -1: the topic's partitions could not be listed. */
  partition: number;
  /** null: deleted. */
  error: string | null;
}

/**
 * deleteOffsets' report: the outcome line, then `TOPIC PARTITION STATUS` rows. `topLevel` is the
 * group-level error name (null when the request succeeded) and its message.
 */
export function formatDeleteOffsets(group: string, topLevel: { name: string; message: string } | null, results: readonly OffsetDeletion[]): string {
  let s: string;
  const partitionFailures = results.some((r) => r.error !== null);
  if (topLevel === null && !partitionFailures) s = `Request succeeded for deleting offsets from group ${group}.\n`;
  else if (topLevel !== null && ['INVALID_GROUP_ID', 'GROUP_ID_NOT_FOUND', 'GROUP_AUTHORIZATION_FAILED', 'NON_EMPTY_GROUP'].includes(topLevel.name))
    s = `\nError: ${topLevel.message}\n`;
  else if (topLevel === null) s = '\nError: Encountered some partition-level error, see the follow-up details.\n';
  else s = `\nError: Encountered some unknown error: ${topLevel.name}\n`;
  const t = results.reduce((n, r) => Math.max(n, r.topic.length), 15);
  const line = (a: string, b: string, c: string) => `\n${pad(a, t)} ${pad(b, 10)} ${pad(c, 15)}`;
  s += line('TOPIC', 'PARTITION', 'STATUS');
  const sorted = [...results].sort((a, b) => {
    const x = `${a.topic}${a.partition}`;
    const y = `${b.topic}${b.partition}`;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const r of sorted) s += line(r.topic, r.partition >= 0 ? String(r.partition) : MISSING, r.error === null ? 'Successful' : `Error: ${r.error}`);
  return `${s}\n`;
}

import type { Command } from 'commander';

/**
 * kafka-consumer-groups.sh's options (ConsumerGroupCommandOptions): definitions, joptsimple-style
 * value conversion and checkArgs' rules, with Kafka's messages. Pure: no I/O.
 */

/** The raw option values commander collects. */
export interface RawConsumerGroupsOptions {
  bootstrapServer?: string;
  commandConfig?: string;
  group?: string[];
  topic?: string[];
  allTopics?: boolean;
  allGroups?: boolean;
  list?: boolean;
  describe?: boolean;
  delete?: boolean;
  resetOffsets?: boolean;
  deleteOffsets?: boolean;
  timeout?: string;
  dryRun?: boolean;
  execute?: boolean;
  export?: boolean;
  toOffset?: string;
  toDatetime?: string;
  byDuration?: string;
  fromFile?: string;
  toEarliest?: boolean;
  toLatest?: boolean;
  toCurrent?: boolean;
  shiftBy?: string;
  members?: boolean;
  verbose?: boolean;
  offsets?: boolean;
  /** `--state` alone is true; `--state a,b` (with --list) the filter. */
  state?: string | boolean;
}

export type ConsumerGroupsAction = 'list' | 'describe' | 'delete' | 'reset-offsets' | 'delete-offsets';
export type DescribeView = 'offsets' | 'members' | 'state';

/** The reset scenario (exactly one). Timestamps in ms since the epoch. */
export type ResetScenario =
  | { kind: 'to-offset'; offset: bigint }
  | { kind: 'to-earliest' }
  | { kind: 'to-latest' }
  | { kind: 'to-current' }
  | { kind: 'shift-by'; shift: bigint }
  | { kind: 'to-datetime'; timestamp: number }
  | { kind: 'by-duration'; durationMs: number }
  | { kind: 'from-file'; path: string };

export interface ConsumerGroupsOptions {
  action: ConsumerGroupsAction;
  bootstrapServer: string;
  commandConfig?: string | undefined;
  groups: string[];
  allGroups: boolean;
  topics: string[];
  allTopics: boolean;
  /** --timeout (ms), default 5000. */
  timeoutMs: number;
  /** describe */
  view: DescribeView;
  verbose: boolean;
  /** list: show the STATE column; the filter (canonical state names), empty for all. */
  listStates: string[] | null;
  /** reset-offsets */
  scenario?: ResetScenario | undefined;
  execute: boolean;
  /** Neither --dry-run nor --execute: Kafka's warning, then a dry run. */
  warnNoExecute: boolean;
  export: boolean;
}

/** A command-line mistake (CommandLineUtils.printUsageAndExit): message on stderr, exit 1. */
export class ConsumerGroupsUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsumerGroupsUsageError';
  }
}

export const DESCRIPTION =
  'This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.';

/** Kafka's consumer group states (ConsumerGroupState, without Unknown). */
export const CONSUMER_GROUP_STATES = ['PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead', 'Empty'] as const;

export const NO_EXECUTE_WARNING =
  'WARN: No action will be performed as the --execute option is missing.' +
  'In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. ' +
  'You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.';

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

export function defineConsumerGroupsOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <server to connect to>', 'REQUIRED: The server(s) to connect to.')
    .option('--command-config <command config property file>', 'Property file containing configs to be passed to Admin Client and Consumer.')
    .option('--group <consumer group>', 'The consumer group we wish to act on (repeatable).', collect)
    .option(
      '--topic <topic>',
      'The topic whose consumer group information should be deleted or topic whose should be included in the reset offset process. In `reset-offsets` case, partitions can be specified using this format: `topic1:0,1,2`, where 0,1,2 are the partition to be included in the process. Reset-offsets also supports multiple topic inputs.',
      collect,
    )
    .option('--all-topics', 'Consider all topics assigned to a group in the `reset-offsets` process.')
    .option('--list', 'List all consumer groups.')
    .option('--describe', 'Describe consumer group and list offset lag (number of messages not yet processed) related to given group.')
    .option('--all-groups', 'Apply to all consumer groups.')
    .option(
      '--delete',
      'Pass in groups to delete topic partition offsets and ownership information over the entire consumer group. For instance --group g1 --group g2',
    )
    .option(
      '--timeout <timeout (ms)>',
      'The timeout that can be set for some use cases. For example, it can be used when describing the group to specify the maximum amount of time in milliseconds to wait before the group stabilizes (when the group is just created, or is going through some changes). (default: 5000)',
    )
    .option(
      '--reset-offsets',
      'Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive. Has 2 execution options: --dry-run (the default) to plan which offsets to reset, and --execute to update the offsets. Additionally, the --export option is used to export the results to a CSV format. You must choose one of the following reset specifications: --to-datetime, --by-duration, --to-earliest, --to-latest, --shift-by, --from-file, --to-current, --to-offset. To define the scope use --all-topics or --topic. One scope must be specified unless you use --from-file.',
    )
    .option('--delete-offsets', 'Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.')
    .option('--dry-run', 'Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets.')
    .option('--execute', 'Execute operation. Supported operations: reset-offsets.')
    .option('--export', 'Export operation execution to a CSV file. Supported operations: reset-offsets.')
    .option('--to-offset <offset>', 'Reset offsets to a specific offset.')
    .option('--to-datetime <datetime>', "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'")
    .option('--by-duration <duration>', "Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'")
    .option('--from-file <path to CSV file>', 'Reset offsets to values defined in CSV file.')
    .option('--to-earliest', 'Reset offsets to earliest offset.')
    .option('--to-latest', 'Reset offsets to latest offset.')
    .option('--to-current', 'Reset offsets to current offset.')
    .option('--shift-by <number-of-offsets>', "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.")
    .option(
      '--members',
      "Describe members of the group. This option may be used with '--describe' and '--bootstrap-server' options only. Example: --bootstrap-server localhost:9092 --describe --group group1 --members",
    )
    .option(
      '--verbose',
      "Provide additional information, if any, when describing the group. This option may be used with '--offsets'/'--members'/'--state' and '--bootstrap-server' options only.",
    )
    .option(
      '--offsets',
      "Describe the group and list all topic partitions in the group along with their offset lag. This is the default sub-action of and may be used with '--describe' and '--bootstrap-server' options only.",
    )
    .option(
      '--state [states]',
      "When specified with '--describe', includes the state of the group. When specified with '--list', it displays the state of all groups. It can also be used to list groups with specific states. Example: --bootstrap-server localhost:9092 --list --state stable,empty",
    );
}

/** joptsimple's Long conversion. */
function parseLong(v: string, option: string): bigint {
  if (!/^[-+]?\d+$/.test(v)) throw new ConsumerGroupsUsageError(`Cannot parse argument '${v}' of option ${option}`);
  const n = BigInt(v);
  if (n > 9223372036854775807n || n < -9223372036854775808n) throw new ConsumerGroupsUsageError(`Cannot parse argument '${v}' of option ${option}`);
  return n;
}

/** Kafka's ConsumerGroupState.parse, case-insensitive; an invalid name fails the whole list. */
export function parseGroupStates(input: string): string[] {
  const out = new Set<string>();
  for (const raw of input.split(',')) {
    const s = CONSUMER_GROUP_STATES.find((x) => x.toLowerCase() === raw.trim().toLowerCase());
    if (!s) throw new ConsumerGroupsUsageError(`Invalid state list '${input}'. Valid states are: ${CONSUMER_GROUP_STATES.join(', ')}`);
    out.add(s);
  }
  return [...out];
}

/**
 * Utils.getDateTime: `yyyy-MM-dd'T'HH:mm:ss.SSS` with an optional zone (Z, ±hh, ±hhmm, ±hh:mm),
 * UTC when none; strict (no 25th hour, no February 30th). Returns ms since the epoch.
 */
export function parseDateTime(input: string): number {
  const parts = input.split('T');
  if (parts.length < 2) throw new ConsumerGroupsUsageError("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format");
  const second = parts[1]!;
  const ts = second.includes('+') || second.includes('-') || second.includes('Z') ? input : `${input}Z`;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)$/.exec(ts);
  const fail = () => new ConsumerGroupsUsageError(`Unparseable date: "${ts}"`);
  if (!m) throw fail();
  const [y, mo, d, h, mi, s, ms] = m.slice(1, 8).map(Number) as [number, number, number, number, number, number, number];
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(utc);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) throw fail();
  const zone = m[8]!;
  let offsetMin = 0;
  if (zone !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    offsetMin = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3] ?? 0));
  }
  return utc - offsetMin * 60_000;
}

/** java.time.Duration.parse (PnDTnHnMn.nS, signs allowed), in ms. */
export function parseDuration(input: string): number {
  const m = /^([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$/i.exec(input);
  const fail = () => new ConsumerGroupsUsageError('Text cannot be parsed to a Duration');
  if (!m || (m[2] === undefined && m[3] === undefined) || m[3] === 'T' || m[3] === 't') throw fail();
  const num = (v: string | undefined) => (v === undefined ? 0 : Number(v));
  let ms = num(m[2]) * 86_400_000 + num(m[4]) * 3_600_000 + num(m[5]) * 60_000 + num(m[6]) * 1000;
  if (m[7]) ms += (m[6]?.startsWith('-') ? -1 : 1) * Math.floor(Number(`0.${m[7]}`) * 1000);
  return m[1] === '-' ? -ms : ms;
}

const SCENARIOS = ['to-offset', 'to-datetime', 'by-duration', 'to-earliest', 'to-latest', 'to-current', 'shift-by', 'from-file'] as const;

/** ConsumerGroupCommandOptions.checkArgs and the main's action check, in Kafka's order. */
export function validateConsumerGroupsOptions(o: RawConsumerGroupsOptions): ConsumerGroupsOptions {
  const has = {
    list: !!o.list,
    describe: !!o.describe,
    delete: !!o.delete,
    'reset-offsets': !!o.resetOffsets,
    'delete-offsets': !!o.deleteOffsets,
  };
  const actions = (Object.keys(has) as ConsumerGroupsAction[]).filter((k) => has[k]);
  if (o.bootstrapServer === undefined) throw new ConsumerGroupsUsageError('Missing required argument "[bootstrap-server]"');
  if (actions.length !== 1)
    throw new ConsumerGroupsUsageError('Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets');
  const action = actions[0]!;
  const groups = o.group ?? [];
  const topics = o.topic ?? [];
  const hasGroup = groups.length > 0;
  const hasTopic = topics.length > 0;
  const cant = (a: string, b: string) => new ConsumerGroupsUsageError(`Option "[${a}]" can't be used with option "[${b}]"`);

  // joptsimple's availableIf
  for (const [flag, set] of [
    ['members', o.members],
    ['verbose', o.verbose],
    ['offsets', o.offsets],
  ] as const) {
    if (set && !has.describe) throw new ConsumerGroupsUsageError(`Option ${flag} is unavailable given other options on the command line (it needs [describe])`);
  }
  if (o.state !== undefined && !has.describe && !has.list)
    throw new ConsumerGroupsUsageError('Option state is unavailable given other options on the command line (it needs [describe] or [list])');

  let timeoutMs = 5000;
  if (o.timeout !== undefined) {
    const t = parseLong(o.timeout, 'timeout');
    if (t <= 0n || t > 2147483647n) throw new ConsumerGroupsUsageError(`Cannot parse argument '${o.timeout}' of option timeout`);
    timeoutMs = Number(t);
  }

  let view: DescribeView = 'offsets';
  if (has.describe) {
    if (!hasGroup && !o.allGroups) throw new ConsumerGroupsUsageError('Option [describe] takes one of these options: [all-groups], [group]');
    const views = [o.members, o.offsets, o.state !== undefined].filter(Boolean).length;
    if (views > 1) throw new ConsumerGroupsUsageError('Option [describe] takes at most one of these options: [members], [offsets], [state]');
    if (typeof o.state === 'string') throw new ConsumerGroupsUsageError('Option [describe] does not take a value for [state]');
    view = o.members ? 'members' : o.state !== undefined ? 'state' : 'offsets';
  }
  if (has.delete) {
    if (!hasGroup && !o.allGroups) throw new ConsumerGroupsUsageError('Option [delete] takes one of these options: [all-groups], [group]');
    if (hasTopic) throw new ConsumerGroupsUsageError('The consumer does not support topic-specific offset deletion from a consumer group.');
  }
  if (has['delete-offsets']) {
    if (!hasGroup || !hasTopic) throw new ConsumerGroupsUsageError('Option [delete-offsets] takes the following options: [group], [topic]');
    if (groups.length > 1) throw new ConsumerGroupsUsageError('Option [delete-offsets] supports one consumer group at the time');
  }

  let scenario: ResetScenario | undefined;
  if (has['reset-offsets']) {
    if (o.dryRun && o.execute) throw new ConsumerGroupsUsageError('Option [reset-offsets] only accepts one of [execute] and [dry-run]');
    if (!hasGroup && !o.allGroups) throw new ConsumerGroupsUsageError('Option [reset-offsets] takes one of these options: [all-groups], [group]');
    const given = SCENARIOS.filter((s) => {
      switch (s) {
        case 'to-offset':
          return o.toOffset !== undefined;
        case 'to-datetime':
          return o.toDatetime !== undefined;
        case 'by-duration':
          return o.byDuration !== undefined;
        case 'to-earliest':
          return !!o.toEarliest;
        case 'to-latest':
          return !!o.toLatest;
        case 'to-current':
          return !!o.toCurrent;
        case 'shift-by':
          return o.shiftBy !== undefined;
        case 'from-file':
          return o.fromFile !== undefined;
      }
    });
    if (given.length > 1) throw cant(given[0]!, given[1]!);
    if (given.length === 0) {
      throw new ConsumerGroupsUsageError(`Option '[reset-offsets]' requires one of the following scenarios: [${SCENARIOS.join(', ')}]`);
    }
    if (!hasTopic && !o.allTopics && given[0] !== 'from-file')
      throw new ConsumerGroupsUsageError('One of the reset scopes should be defined: --all-topics, --topic.');
    if (hasTopic && o.allTopics) throw cant('topic', 'all-topics');
    switch (given[0]!) {
      case 'to-offset':
        scenario = { kind: 'to-offset', offset: parseLong(o.toOffset!, 'to-offset') };
        break;
      case 'shift-by':
        scenario = { kind: 'shift-by', shift: parseLong(o.shiftBy!, 'shift-by') };
        break;
      case 'to-datetime':
        scenario = { kind: 'to-datetime', timestamp: parseDateTime(o.toDatetime!) };
        break;
      case 'by-duration':
        scenario = { kind: 'by-duration', durationMs: parseDuration(o.byDuration!) };
        break;
      case 'from-file':
        scenario = { kind: 'from-file', path: o.fromFile! };
        break;
      default:
        scenario = { kind: given[0] as 'to-earliest' | 'to-latest' | 'to-current' };
    }
  } else {
    for (const [flag, set] of [
      ['dry-run', o.dryRun],
      ['execute', o.execute],
      ['export', o.export],
      ['all-topics', o.allTopics],
    ] as const) {
      if (set) throw cant(flag, action);
    }
  }

  if (hasGroup && o.allGroups) throw cant('group', 'all-groups');
  if (hasGroup && has.list) throw cant('group', 'list');
  if (hasTopic && (has.list || has.describe)) throw cant('topic', action);

  let listStates: string[] | null = null;
  if (has.list && o.state !== undefined) listStates = typeof o.state === 'string' && o.state !== '' ? parseGroupStates(o.state) : [];

  return {
    action,
    bootstrapServer: o.bootstrapServer,
    commandConfig: o.commandConfig,
    groups: [...new Set(groups)],
    allGroups: !!o.allGroups,
    topics,
    allTopics: !!o.allTopics,
    timeoutMs,
    view,
    verbose: !!o.verbose,
    listStates,
    scenario,
    execute: !!o.execute,
    warnNoExecute: has['reset-offsets'] && !o.dryRun && !o.execute,
    export: !!o.export,
  };
}

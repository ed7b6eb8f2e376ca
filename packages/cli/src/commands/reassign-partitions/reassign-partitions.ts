import type { Command } from 'commander';
import { compareTopicPartitions, topicPartitionKey } from '@samsa/client';
import { assignReplicasToBrokers } from '@samsa/server-common';
import { AdminReassignBackend, ReassignCommandError, ZkReassignBackend, type ReassignBackend, type TP } from './reassign-backend.js';
import { fileReader, openAdmin, readCommandConfig, type AdminToolDeps } from '../../shared/admin-client.js';
import { commandBuilder, printer, registerCommand, runCommand, type CommandBuilder, type CommandIo } from '../../shared/runner.js';

/**
 * `samsa reassign-partitions`: Kafka's kafka-reassign-partitions.sh (ReassignPartitionsCommand) —
 * --generate, --execute [--throttle], --verify, --cancel, --list with Kafka's flags, JSON files and
 * output; over --bootstrap-server (Admin API) or --zookeeper (/admin/reassign_partitions, as Kafka
 * 2.x). Samsa adds `--wait` to --verify: poll with a progress bar until every partition is done.
 */

/** isTty: the progress bar of --verify --wait redraws one line. */
export type ReassignIo = CommandIo;

export interface ReassignDeps extends AdminToolDeps {
  openZk?: (connectString: string) => Promise<ReassignBackend>;
  random?: (n: number) => number;
  /** Poll interval of --verify --wait. Default 1 s. */
  waitIntervalMs?: number;
}

export interface RawReassignOptions {
  bootstrapServer?: string;
  zookeeper?: string;
  commandConfig?: string;
  generate?: boolean;
  execute?: boolean;
  verify?: boolean;
  cancel?: boolean;
  list?: boolean;
  reassignmentJsonFile?: string;
  topicsToMoveJsonFile?: string;
  brokerList?: string;
  disableRackAware?: boolean;
  throttle?: string;
  timeout?: string;
  additional?: boolean;
  preserveThrottles?: boolean;
  wait?: boolean;
}

class UsageError extends Error {}

const EXISTING =
  'Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment.';
const VERIFY_WARNING = 'Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.';

function defineOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap-server <host:port>', 'The server(s) to use for bootstrapping.')
    .option('--zookeeper <urls>', 'ZooKeeper connection string (host:port[/chroot]); writes /admin/reassign_partitions as Kafka 2.x did.')
    .option('--command-config <file>', 'Property file containing configs to be passed to the Admin client.')
    .option('--generate', 'Generate a candidate partition reassignment configuration. This only generates a candidate assignment, it does not execute it.')
    .option('--execute', 'Kick off the reassignment as specified by the --reassignment-json-file option.')
    .option(
      '--verify',
      'Verify if the reassignment completed as specified by the --reassignment-json-file option. If there is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle will be removed.',
    )
    .option('--cancel', 'Cancel an active reassignment.')
    .option('--list', 'List all active partition reassignments.')
    .option('--reassignment-json-file <file>', 'The JSON file with the partition reassignment configuration.')
    .option(
      '--topics-to-move-json-file <file>',
      'Generate a reassignment configuration to move the partitions of the specified topics to the list of brokers specified by the --broker-list option.',
    )
    .option('--broker-list <ids>', 'The list of brokers to which the partitions need to be reassigned in the form "0,1,2".')
    .option('--disable-rack-aware', 'Disable rack aware replica assignment.')
    .option('--throttle <bytes/s>', 'The movement of partitions between brokers will be throttled to this value (bytes/sec).')
    .option('--timeout <ms>', 'The maximum time in ms to wait for log directory replica assignment to begin.')
    .option('--additional', 'Execute this reassignment in addition to any other ongoing ones.')
    .option('--preserve-throttles', 'Do not modify broker or topic throttles.')
    .option('--wait', 'samsa: with --verify, poll (showing progress) until every partition is reassigned.');
}

// ---- JSON files ----------------------------------------------------------------------------

/** Kafka's formatAsReassignmentJson (log_dirs always "any"). */
export function formatReassignmentJson(parts: Array<TP & { replicas: number[] }>): string {
  const sorted = [...parts].sort(compareTopicPartitions);
  return JSON.stringify({
    version: 1,
    partitions: sorted.map((p) => ({ topic: p.topic, partition: p.partition, replicas: p.replicas, log_dirs: p.replicas.map(() => 'any') })),
  });
}

function parseJson(text: string, what: string): Record<string, unknown> {
  let js: unknown;
  try {
    js = JSON.parse(text);
  } catch {
    throw new ReassignCommandError(`The input string is not a valid JSON (${what})`);
  }
  if (typeof js !== 'object' || js === null || Array.isArray(js)) throw new ReassignCommandError(`The input string is not a valid JSON object (${what})`);
  return js as Record<string, unknown>;
}

/** Kafka's parseTopicsData: {"topics":[{"topic":"foo"}],"version":1}. */
export function parseTopicsToMove(text: string): string[] {
  const js = parseJson(text, 'topics to move');
  const version = js['version'] ?? 1;
  if (version !== 1) throw new ReassignCommandError(`Not supported version field value ${JSON.stringify(version)}`);
  const topics = js['topics'];
  if (topics === undefined) return [];
  if (!Array.isArray(topics)) throw new ReassignCommandError('"topics" should be an array');
  const out = topics.map((t, i) => {
    const name = (t as Record<string, unknown> | null)?.['topic'];
    if (typeof name !== 'string') throw new ReassignCommandError(`topics[${i}].topic should be a string`);
    return name;
  });
  const dup = out.find((t, i) => out.indexOf(t) !== i);
  if (dup !== undefined) throw new ReassignCommandError(`List of topics to reassign contains duplicate entries: ${dup}`);
  return out;
}

/** Kafka's parsePartitionReassignmentData: {"version":1,"partitions":[{"topic","partition","replicas","log_dirs"?}]}. */
export function parseReassignmentJson(text: string): Array<TP & { replicas: number[] }> {
  const js = parseJson(text, 'reassignment');
  const version = js['version'] ?? 1;
  if (version !== 1) throw new ReassignCommandError(`Not supported version field value ${JSON.stringify(version)}`);
  const list = js['partitions'];
  if (!Array.isArray(list)) throw new ReassignCommandError('Partition reassignment data should have a "partitions" array');
  if (list.length === 0) throw new ReassignCommandError('Partition reassignment list cannot be empty');
  const out = list.map((raw, i) => {
    const e = (raw ?? {}) as Record<string, unknown>;
    const { topic, partition, replicas } = e;
    if (typeof topic !== 'string') throw new ReassignCommandError(`partitions[${i}].topic should be a string`);
    if (typeof partition !== 'number' || !Number.isInteger(partition)) throw new ReassignCommandError(`partitions[${i}].partition should be an int`);
    if (!Array.isArray(replicas) || replicas.some((r) => typeof r !== 'number' || !Number.isInteger(r)))
      throw new ReassignCommandError(`partitions[${i}].replicas should be a list of ints`);
    const reps = replicas as number[];
    if (new Set(reps).size !== reps.length)
      throw new ReassignCommandError(`Partition replica lists may not contain duplicate entries: ${topicPartitionKey(topic, partition)}`);
    const dirs = e['log_dirs'];
    if (dirs !== undefined) {
      if (!Array.isArray(dirs) || dirs.length !== reps.length)
        throw new ReassignCommandError(
          `Size of replicas list ${JSON.stringify(reps)} is different from size of log dirs list ${JSON.stringify(dirs)} for partition ${topicPartitionKey(topic, partition)}`,
        );
      if (dirs.some((d) => d !== 'any'))
        throw new ReassignCommandError('Moving replicas between log directories is not supported by Samsa (log_dirs must be "any")');
    }
    return { topic, partition, replicas: reps };
  });
  const keys = out.map((tp) => topicPartitionKey(tp));
  const dups = [...new Set(keys.filter((k, i) => keys.indexOf(k) !== i))];
  if (dups.length > 0) throw new ReassignCommandError(`Reassignment JSON file contains duplicate topic partitions: ${dups.join(',')}`);
  return out;
}

// ---- actions -------------------------------------------------------------------------------

function parseBrokerList(s: string): number[] {
  const ids = s.split(',').map((x) => x.trim());
  if (ids.some((x) => !/^\d+$/.test(x))) throw new ReassignCommandError(`Invalid --broker-list ${s}: expected broker ids like 0,1,2`);
  const nums = ids.map(Number);
  if (new Set(nums).size !== nums.length) throw new ReassignCommandError(`Duplicate broker ids in broker list: ${s}`);
  return nums;
}

async function generate(
  b: ReassignBackend,
  o: RawReassignOptions,
  read: (p: string) => string,
  println: (s: string) => void,
  random?: (n: number) => number,
): Promise<void> {
  const topics = parseTopicsToMove(read(o.topicsToMoveJsonFile!));
  const brokerIds = parseBrokerList(o.brokerList!);
  const known = await b.brokers();
  const missing = brokerIds.filter((id) => !known.some((k) => k.id === id));
  if (missing.length > 0) throw new ReassignCommandError(`The following brokers are not in the cluster: ${missing.join(',')}`);
  const brokers = brokerIds.map((id) => ({ id, rack: o.disableRackAware ? null : (known.find((k) => k.id === id)?.rack ?? null) }));
  const current = [...(await b.topicAssignments(topics)).values()].map(({ tp, replicas }) => ({ ...tp, replicas }));
  const proposed: Array<TP & { replicas: number[] }> = [];
  for (const topic of topics) {
    const parts = current.filter((c) => c.topic === topic).sort(compareTopicPartitions);
    const rf = parts[0]?.replicas.length ?? 0;
    const a = assignReplicasToBrokers(brokers, parts.length, rf, random ? { random } : {});
    for (const [partition, replicas] of a) proposed.push({ topic, partition, replicas });
  }
  println(`Current partition replica assignment\n${formatReassignmentJson(current)}\n`);
  println(`Proposed partition reassignment configuration\n${formatReassignmentJson(proposed)}`);
}

/** Kafka's calculateProposedMoveMap + calculateLeader/FollowerThrottles: per topic "p:b" lists. */
export function throttleLists(
  targets: Array<TP & { replicas: number[] }>,
  current: Map<string, number[]>,
  ongoing: Map<string, number[]>,
): Map<string, { leader: string; follower: string }> {
  const byTopic = new Map<string, { leader: Set<string>; follower: Set<string> }>();
  for (const t of targets) {
    const sources = ongoing.get(topicPartitionKey(t)) ?? current.get(topicPartitionKey(t)) ?? [];
    const e = byTopic.get(t.topic) ?? { leader: new Set<string>(), follower: new Set<string>() };
    for (const s of sources) e.leader.add(`${t.partition}:${s}`);
    for (const d of t.replicas) if (!sources.includes(d)) e.follower.add(`${t.partition}:${d}`);
    byTopic.set(t.topic, e);
  }
  const sort = (s: Set<string>) => [...s].sort().join(',');
  return new Map([...byTopic].map(([t, e]) => [t, { leader: sort(e.leader), follower: sort(e.follower) }]));
}

async function execute(b: ReassignBackend, o: RawReassignOptions, read: (p: string) => string, println: (s: string) => void): Promise<void> {
  const targets = parseReassignmentJson(read(o.reassignmentJsonFile!));
  const throttle = o.throttle === undefined ? -1 : Number(o.throttle);
  if (!Number.isInteger(throttle) || throttle < -1) throw new ReassignCommandError(`Invalid --throttle ${o.throttle}: expected bytes per second`);
  const ongoing = await b.ongoing(null);
  if (ongoing.length > 0 && !o.additional) throw new ReassignCommandError(EXISTING);
  const live = new Set((await b.brokers()).map((x) => x.id));
  const unknown = [...new Set(targets.flatMap((t) => t.replicas).filter((r) => !live.has(r)))];
  if (unknown.length > 0) throw new ReassignCommandError(`Unknown broker id(s) in the proposed assignment: ${unknown.join(',')}`);
  const assignments = await b.topicAssignments([...new Set(targets.map((t) => t.topic))]);
  const missing = targets.filter((t) => !assignments.has(topicPartitionKey(t)));
  if (missing.length > 0) throw new ReassignCommandError(`Unable to find partition: ${missing.map((tp) => topicPartitionKey(tp)).join(',')}`);
  const current = new Map([...assignments].map(([k, v]) => [k, v.replicas]));
  println(
    `Current partition replica assignment\n\n${formatReassignmentJson(targets.map((t) => ({ ...t, replicas: current.get(topicPartitionKey(t))! })))}\n\nSave this to use as the --reassignment-json-file option during rollback`,
  );
  if (throttle >= 0) {
    println(VERIFY_WARNING);
    const origin = new Map(ongoing.map((r) => [topicPartitionKey(r), r.replicas.filter((x) => !r.addingReplicas.includes(x))]));
    const lists = throttleLists(targets, current, origin);
    for (const [topic, l] of lists) await b.setTopicThrottles(topic, l.leader, l.follower);
    const brokers = new Set<number>();
    for (const t of targets) for (const r of [...t.replicas, ...(origin.get(topicPartitionKey(t)) ?? current.get(topicPartitionKey(t)) ?? [])]) brokers.add(r);
    await b.setBrokerThrottle(
      [...brokers].sort((x, y) => x - y),
      throttle,
    );
    println(`The inter-broker throttle limit was set to ${throttle} B/s`);
  }
  const errors = await b.alter(targets);
  if (errors.size > 0) {
    const lines = targets
      .filter((t) => errors.has(topicPartitionKey(t)))
      .sort(compareTopicPartitions)
      .map((t) => `${topicPartitionKey(t)}: ${errors.get(topicPartitionKey(t))}`);
    throw new ReassignCommandError(`Error reassigning partition(s):\n${lines.join('\n')}`);
  }
  println(
    `Successfully started partition reassignment${targets.length === 1 ? '' : 's'} for ${[...targets]
      .sort(compareTopicPartitions)
      .map((tp) => topicPartitionKey(tp))
      .join(',')}`,
  );
}

interface PartitionStatus {
  tp: TP;
  /** The controller lists no reassignment of it. */
  inactive: boolean;
  /** Completed: no reassignment in progress AND the replicas equal the target. */
  done: boolean;
  current: number[];
  target: number[];
}

/**
 * Each partition's state: the controller's ongoing reassignments, then the current replicas (from
 * Metadata, which any broker answers). A partition the controller no longer lists whose replicas
 * differ from the target is not counted as completed: the broker answering Metadata may not have
 * applied the controller's UpdateMetadata yet (it still shows RS = TRS + ORS), or another
 * reassignment replaced this one.
 */
async function statuses(b: ReassignBackend, targets: Array<TP & { replicas: number[] }>): Promise<PartitionStatus[]> {
  const ongoing = new Set((await b.ongoing(targets)).map((tp) => topicPartitionKey(tp)));
  const current = await b.topicAssignments([...new Set(targets.map((t) => t.topic))]).catch(() => new Map<string, { tp: TP; replicas: number[] }>());
  return [...targets].sort(compareTopicPartitions).map((t) => {
    const replicas = current.get(topicPartitionKey(t))?.replicas ?? [];
    const inactive = !ongoing.has(topicPartitionKey(t));
    return { tp: t, inactive, done: inactive && replicas.join() === t.replicas.join(), current: replicas, target: t.replicas };
  });
}

function statusLines(states: PartitionStatus[]): string[] {
  return [
    'Status of partition reassignment:',
    ...states.map((s) => {
      if (!s.inactive) return `Reassignment of partition ${topicPartitionKey(s.tp)} is still in progress.`;
      if (s.done) return `Reassignment of partition ${topicPartitionKey(s.tp)} is completed.`;
      return `There is no active reassignment of partition ${topicPartitionKey(s.tp)}, but replica set is ${s.current.join(',')} rather than ${s.target.join(',')}.`;
    }),
  ];
}

/** `[#####.....] 3/6 partitions reassigned` */
export function progressBar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} partitions reassigned`;
}

async function clearAllThrottles(b: ReassignBackend, targets: Array<TP & { replicas: number[] }>, println: (s: string) => void): Promise<void> {
  const brokers = [...new Set([...(await b.brokers()).map((x) => x.id), ...targets.flatMap((t) => t.replicas)])].sort((x, y) => x - y);
  println(`Clearing broker-level throttles on broker${brokers.length === 1 ? '' : 's'} ${brokers.join(',')}`);
  await b.clearBrokerThrottles(brokers);
  const topics = [...new Set(targets.map((t) => t.topic))].sort();
  println(`Clearing topic-level throttle${topics.length === 1 ? '' : 's'} on topic${topics.length === 1 ? '' : 's'} ${topics.join(',')}`);
  await b.clearTopicThrottles(topics);
}

async function verify(
  b: ReassignBackend,
  o: RawReassignOptions,
  io: ReassignIo,
  deps: ReassignDeps,
  read: (p: string) => string,
  println: (s: string) => void,
): Promise<void> {
  const targets = parseReassignmentJson(read(o.reassignmentJsonFile!));
  let states = await statuses(b, targets);
  if (o.wait) {
    let last = '';
    for (;;) {
      const bar = progressBar(states.filter((s) => s.done).length, states.length);
      if (io.isTty) io.out(`\r${bar}`);
      else if (bar !== last) println(bar);
      last = bar;
      if (states.every((s) => s.done)) break;
      await new Promise((r) => setTimeout(r, deps.waitIntervalMs ?? 1000));
      states = await statuses(b, targets);
    }
    if (io.isTty) io.out('\n');
  }
  for (const l of statusLines(states)) println(l);
  if (states.every((s) => s.done) && !o.preserveThrottles) await clearAllThrottles(b, targets, println);
}

async function cancel(b: ReassignBackend, o: RawReassignOptions, read: (p: string) => string, println: (s: string) => void): Promise<void> {
  const targets = parseReassignmentJson(read(o.reassignmentJsonFile!));
  const active = (await b.ongoing(targets)).sort(compareTopicPartitions);
  if (active.length > 0) {
    const errors = await b.alter(active.map((a) => ({ topic: a.topic, partition: a.partition, replicas: null })));
    if (errors.size > 0) {
      for (const [k, m] of errors) println(`Error cancelling partition ${k}: ${m}`);
      throw new ReassignCommandError('Some partition reassignment cancellations failed.');
    }
  }
  if (!o.preserveThrottles) await clearAllThrottles(b, targets, println);
  if (active.length > 0)
    println(`Successfully cancelled partition reassignment${active.length === 1 ? '' : 's'} for: ${active.map((tp) => topicPartitionKey(tp)).join(',')}`);
  else println('None of the specified partition reassignments are active.');
}

async function list(b: ReassignBackend, println: (s: string) => void): Promise<void> {
  const ongoing = (await b.ongoing(null)).sort(compareTopicPartitions);
  if (ongoing.length === 0) {
    println('No partition reassignments found.');
    return;
  }
  println('Current partition reassignments:');
  for (const r of ongoing) {
    let line = `${topicPartitionKey(r)}: replicas: ${r.replicas.join(',')}.`;
    if (r.addingReplicas.length > 0) line += ` adding: ${r.addingReplicas.join(',')}.`;
    if (r.removingReplicas.length > 0) line += ` removing: ${r.removingReplicas.join(',')}.`;
    println(line);
  }
}

function validate(o: RawReassignOptions): 'generate' | 'execute' | 'verify' | 'cancel' | 'list' {
  const actions = (['generate', 'execute', 'verify', 'cancel', 'list'] as const).filter((a) => o[a]);
  if (actions.length !== 1) throw new UsageError('Command must include exactly one action: --generate, --execute, --verify, --cancel, or --list');
  const action = actions[0]!;
  if ((o.bootstrapServer === undefined) === (o.zookeeper === undefined)) throw new UsageError('Please specify --bootstrap-server (or --zookeeper)');
  const need = (flag: keyof RawReassignOptions, name: string) => {
    if (o[flag] === undefined) throw new UsageError(`Missing required argument "[${name}]"`);
  };
  if (action === 'generate') {
    need('topicsToMoveJsonFile', 'topics-to-move-json-file');
    need('brokerList', 'broker-list');
  } else if (action !== 'list') need('reassignmentJsonFile', 'reassignment-json-file');
  if (o.throttle !== undefined && action !== 'execute') throw new UsageError('Option "[throttle]" can\'t be used with this action');
  if (o.wait && action !== 'verify') throw new UsageError('Option "[wait]" can only be used with --verify');
  return action;
}

/** Runs the command; resolves with the exit code. */
export async function executeReassignCommand(o: RawReassignOptions, io: ReassignIo, deps: ReassignDeps = {}): Promise<number> {
  const println = printer(io);
  let action;
  try {
    action = validate(o);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`${err.message}\nRun \`samsa reassign-partitions --help\` for the options.\n`);
    return 1;
  }
  const read = fileReader(deps);
  let backend: ReassignBackend | undefined;
  try {
    if (o.zookeeper !== undefined) backend = await (deps.openZk ?? ((c: string) => ZkReassignBackend.connect(c)))(o.zookeeper);
    else {
      backend = new AdminReassignBackend(
        openAdmin({ bootstrapServers: o.bootstrapServer!, clientId: 'samsa-reassign-partitions' }, deps, readCommandConfig(o.commandConfig, read)),
      );
    }
    switch (action) {
      case 'generate':
        await generate(backend, o, read, println, deps.random);
        break;
      case 'execute':
        await execute(backend, o, read, println);
        break;
      case 'verify':
        await verify(backend, o, io, deps, read, println);
        break;
      case 'cancel':
        await cancel(backend, o, read, println);
        break;
      case 'list':
        await list(backend, println);
        break;
    }
    return 0;
  } catch (err) {
    // ReassignPartitionsCommand: terse failures print their message, others "Error: ..."
    println(err instanceof ReassignCommandError ? err.message : `Error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await backend?.close().catch(() => undefined);
  }
}

const reassignCommand = (deps: ReassignDeps): CommandBuilder =>
  commandBuilder(
    'reassign-partitions',
    "Move partitions between brokers (Kafka's kafka-reassign-partitions.sh)",
    defineOptions,
    (raw: RawReassignOptions, io) => executeReassignCommand(raw, io, deps),
  );

/** Runs `samsa reassign-partitions <argv…>` writing to `io`; resolves with the exit code. */
export function runReassignCommand(argv: readonly string[], io: ReassignIo, deps: ReassignDeps = {}): Promise<number> {
  return runCommand(reassignCommand(deps), argv, io);
}

export function registerReassignPartitionsCommand(program: Command, deps: ReassignDeps = {}): void {
  registerCommand(program, reassignCommand(deps));
}

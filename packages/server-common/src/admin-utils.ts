import { KafkaError } from '@samsa/protocol';

/** A broker as replica assignment sees it. */
export interface BrokerMetadata {
  id: number;
  rack: string | null;
}

export interface AssignmentOptions {
  /** Index of the first partition's leader in the broker list; random when < 0 (Kafka's default). */
  fixedStartIndex?: number;
  /** First partition id to assign (partition increase starts at the current count). */
  startPartitionId?: number;
  /** Random source for the start index and replica shift (tests inject a seeded one). */
  random?: (n: number) => number;
}

const defaultRandom = (n: number) => Math.floor(Math.random() * n);

/**
 * Kafka's replica assignment (AdminUtils.assignReplicasToBrokers): partitions' first replicas
 * round-robin from a random start, followers shifted so they never share the leader's broker, and —
 * when every broker has a rack — replicas spread over racks. Throws INVALID_PARTITIONS /
 * INVALID_REPLICATION_FACTOR as Kafka does; rack-aware needs all or none of the brokers to have a rack.
 */
export function assignReplicasToBrokers(
  brokers: readonly BrokerMetadata[],
  nPartitions: number,
  replicationFactor: number,
  opts: AssignmentOptions = {},
): Map<number, number[]> {
  if (nPartitions <= 0) throw new KafkaError('INVALID_PARTITIONS', 'Number of partitions must be larger than 0.');
  if (replicationFactor <= 0) throw new KafkaError('INVALID_REPLICATION_FACTOR', 'Replication factor must be larger than 0.');
  if (replicationFactor > brokers.length) {
    throw new KafkaError('INVALID_REPLICATION_FACTOR', `Replication factor: ${replicationFactor} larger than available brokers: ${brokers.length}.`);
  }
  const withRack = brokers.filter((b) => b.rack !== null);
  if (withRack.length === 0) {
    return assignRackUnaware(
      nPartitions,
      replicationFactor,
      brokers.map((b) => b.id).sort((a, b) => a - b),
      opts,
    );
  }
  if (withRack.length < brokers.length) {
    throw new KafkaError('INVALID_REPLICATION_FACTOR', 'Not all brokers have rack information for replica rack aware assignment.');
  }
  return assignRackAware(nPartitions, replicationFactor, brokers, opts);
}

/** Position of the j-th follower: shifted by 1..n-1 from the leader, never onto it. */
function replicaIndex(firstReplicaIndex: number, secondReplicaShift: number, j: number, nBrokers: number): number {
  const shift = 1 + ((secondReplicaShift + j) % (nBrokers - 1));
  return (firstReplicaIndex + shift) % nBrokers;
}

function assignRackUnaware(nPartitions: number, replicationFactor: number, brokerArray: number[], opts: AssignmentOptions): Map<number, number[]> {
  const rand = opts.random ?? defaultRandom;
  const fixed = opts.fixedStartIndex ?? -1;
  const n = brokerArray.length;
  const ret = new Map<number, number[]>();
  const startIndex = fixed >= 0 ? fixed : rand(n);
  let currentPartitionId = Math.max(0, opts.startPartitionId ?? -1);
  let nextReplicaShift = fixed >= 0 ? fixed : rand(n);
  for (let i = 0; i < nPartitions; i++) {
    // after a full round, shift the followers so new partitions get different follower sequences
    if (currentPartitionId > 0 && currentPartitionId % n === 0) nextReplicaShift += 1;
    const firstReplicaIndex = (currentPartitionId + startIndex) % n;
    const replicas = [brokerArray[firstReplicaIndex]!];
    for (let j = 0; j < replicationFactor - 1; j++) {
      replicas.push(brokerArray[replicaIndex(firstReplicaIndex, nextReplicaShift, j, n)]!);
    }
    ret.set(currentPartitionId, replicas);
    currentPartitionId += 1;
  }
  return ret;
}

/** Brokers interleaved by rack: racks sorted, brokers sorted within a rack (0,3,6,1,4,7,…). */
export function rackAlternatedBrokerList(brokers: readonly BrokerMetadata[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const b of brokers) {
    const list = byRack.get(b.rack!) ?? [];
    list.push(b.id);
    byRack.set(b.rack!, list);
  }
  const racks = [...byRack.keys()].sort();
  const iters = racks.map((r) => byRack.get(r)!.sort((a, b) => a - b));
  const pos = racks.map(() => 0);
  const result: number[] = [];
  let rackIndex = 0;
  while (result.length < brokers.length) {
    const list = iters[rackIndex]!;
    if (pos[rackIndex]! < list.length) result.push(list[pos[rackIndex]!++]!);
    rackIndex = (rackIndex + 1) % racks.length;
  }
  return result;
}

function assignRackAware(nPartitions: number, replicationFactor: number, brokers: readonly BrokerMetadata[], opts: AssignmentOptions): Map<number, number[]> {
  const rand = opts.random ?? defaultRandom;
  const fixed = opts.fixedStartIndex ?? -1;
  const rackOf = new Map(brokers.map((b) => [b.id, b.rack!]));
  const numRacks = new Set(rackOf.values()).size;
  const arranged = rackAlternatedBrokerList(brokers);
  const numBrokers = arranged.length;
  const ret = new Map<number, number[]>();
  const startIndex = fixed >= 0 ? fixed : rand(numBrokers);
  let currentPartitionId = Math.max(0, opts.startPartitionId ?? -1);
  let nextReplicaShift = fixed >= 0 ? fixed : rand(numBrokers);
  for (let i = 0; i < nPartitions; i++) {
    if (currentPartitionId > 0 && currentPartitionId % numBrokers === 0) nextReplicaShift += 1;
    const firstReplicaIndex = (currentPartitionId + startIndex) % numBrokers;
    const leader = arranged[firstReplicaIndex]!;
    const replicas = [leader];
    const racksWithReplicas = new Set([rackOf.get(leader)!]);
    const brokersWithReplicas = new Set([leader]);
    let k = 0;
    for (let r = 0; r < replicationFactor - 1; r++) {
      for (;;) {
        const broker = arranged[replicaIndex(firstReplicaIndex, nextReplicaShift * numRacks, k, numBrokers)]!;
        const rack = rackOf.get(broker)!;
        k += 1;
        // skip a broker whose rack already has a replica while some rack has none, or a broker that
        // already holds a replica while some broker holds none
        if (
          (!racksWithReplicas.has(rack) || racksWithReplicas.size === numRacks) &&
          (!brokersWithReplicas.has(broker) || brokersWithReplicas.size === numBrokers)
        ) {
          replicas.push(broker);
          racksWithReplicas.add(rack);
          brokersWithReplicas.add(broker);
          break;
        }
      }
    }
    ret.set(currentPartitionId, replicas);
    currentPartitionId += 1;
  }
  return ret;
}

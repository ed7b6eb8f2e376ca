/**
 * Leader election strategies (Kafka's PartitionLeaderElectionAlgorithms). Pure functions: the
 * partition state machine feeds them the assignment (AR, in order), the ISR and the live replicas.
 */

export interface ElectionResult {
  leader: number;
  isr: number[];
  /** True when the leader came from outside the ISR (data may be lost). */
  unclean: boolean;
}

/**
 * Offline partition: the first live replica in AR order that is in the ISR; if none and unclean
 * election is enabled, the first live replica at all (its ISR becomes just itself).
 */
export function offlinePartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  liveReplicas: ReadonlySet<number>,
  uncleanLeaderElectionEnabled: boolean,
): ElectionResult | null {
  const clean = assignment.find((id) => liveReplicas.has(id) && isr.includes(id));
  if (clean !== undefined) return { leader: clean, isr: isr.filter((id) => liveReplicas.has(id)), unclean: false };
  if (!uncleanLeaderElectionEnabled) return null;
  const unclean = assignment.find((id) => liveReplicas.has(id));
  return unclean === undefined ? null : { leader: unclean, isr: [unclean], unclean: true };
}

/** Preferred replica: only the first replica of AR, and only if it is live and in the ISR. */
export function preferredReplicaPartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  liveReplicas: ReadonlySet<number>,
): ElectionResult | null {
  const preferred = assignment[0];
  if (preferred === undefined || !liveReplicas.has(preferred) || !isr.includes(preferred)) return null;
  return { leader: preferred, isr: [...isr], unclean: false };
}

/** Reassignment: the first replica of the target replicas that is live and in the ISR. */
export function reassignPartitionLeaderElection(
  reassignment: readonly number[],
  isr: readonly number[],
  liveReplicas: ReadonlySet<number>,
): ElectionResult | null {
  const leader = reassignment.find((id) => liveReplicas.has(id) && isr.includes(id));
  return leader === undefined ? null : { leader, isr: [...isr], unclean: false };
}

/** Controlled shutdown: a live ISR member not shutting down; the shutting-down brokers leave the ISR. */
export function controlledShutdownPartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  liveReplicas: ReadonlySet<number>,
  shuttingDownBrokers: ReadonlySet<number>,
): ElectionResult | null {
  const leader = assignment.find((id) => liveReplicas.has(id) && isr.includes(id) && !shuttingDownBrokers.has(id));
  if (leader === undefined) return null;
  return { leader, isr: isr.filter((id) => !shuttingDownBrokers.has(id)), unclean: false };
}

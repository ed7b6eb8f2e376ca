import type { ReplicaAssignment } from './context.js';

/**
 * Kafka's ReplicaAssignment arithmetic (KIP-455). During a reassignment the topic znode holds
 * RS = ORS + TRS with AR (adding) = TRS − ORS and RR (removing) = ORS − TRS, so the original and
 * the target replica sets can both be recovered from ZooKeeper after a controller failover.
 */

/** ORS: the replicas before the reassignment (RS − AR). */
export function originReplicas(a: ReplicaAssignment): number[] {
  return a.replicas.filter((r) => !a.addingReplicas.includes(r));
}

/** TRS: the replicas once the reassignment is done (RS − RR). */
export function targetReplicas(a: ReplicaAssignment): number[] {
  return a.replicas.filter((r) => !a.removingReplicas.includes(r));
}

export function isBeingReassigned(a: ReplicaAssignment): boolean {
  return a.addingReplicas.length > 0 || a.removingReplicas.length > 0;
}

/**
 * The assignment moving `a` to `target`: RS = (TRS ++ ORS) distinct, in that order (so the target's
 * first replica is the preferred one), AR = RS − ORS, RR = RS − TRS. Reassigning to the original
 * replicas cancels: no adding, no removing.
 */
export function reassignTo(a: ReplicaAssignment, target: readonly number[]): ReplicaAssignment {
  const origin = originReplicas(a);
  const replicas = [...new Set([...target, ...origin])];
  return {
    replicas,
    addingReplicas: replicas.filter((r) => !origin.includes(r)),
    removingReplicas: replicas.filter((r) => !target.includes(r)),
  };
}

export function sameAssignment(a: ReplicaAssignment, b: ReplicaAssignment): boolean {
  const eq = (x: readonly number[], y: readonly number[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return eq(a.replicas, b.replicas) && eq(a.addingReplicas, b.addingReplicas) && eq(a.removingReplicas, b.removingReplicas);
}

/** Same replicas, possibly in another order. */
export function sameReplicaSet(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((r) => b.includes(r));
}

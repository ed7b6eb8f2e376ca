/**
 * The controller event timeline, derived by diffing successive cluster snapshots (Metadata as the
 * brokers serve it, which the controller keeps current with UpdateMetadata): brokers that joined or
 * left, controller changes, leader elections, partitions going offline, ISR shrinks and expands,
 * topics created / deleted / grown. Changes of one kind on one topic in one poll are one event.
 */
import { TimelineKind, type TimelineEvent } from './state.js';

export interface SnapshotPartition {
  partition: number;
  leader: number | null;
  isr: readonly number[];
}

export interface ClusterSnapshot {
  brokers: readonly number[];
  controllerId: number | null;
  /** Controller epoch when known (metrics), else null. */
  controllerEpoch: number | null;
  topics: ReadonlyMap<string, readonly SnapshotPartition[]>;
}

const list = (ids: readonly number[]) => (ids.length === 0 ? 'none' : ids.join(','));
const sameSet = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x) => b.includes(x));
const leaderName = (l: number | null) => (l === null ? 'none' : String(l));
/** Shown per event before "… and N more" (the details stay in `partitions`). */
const SHOWN = 8;
const some = (items: readonly string[]) =>
  items.length <= SHOWN ? items.join(', ') : `${items.slice(0, SHOWN).join(', ')} … and ${items.length - SHOWN} more`;
const counted = (n: number) => `${n} partition${n === 1 ? '' : 's'}`;

/** Events that turn `prev` into `next`, in a stable order (brokers, controller, then topics by name). */
export function diffSnapshots(prev: ClusterSnapshot, next: ClusterSnapshot, at: number): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  const ev = (e: Omit<TimelineEvent, 'at' | 'source'>) => out.push({ at, source: 'metadata', ...e });

  for (const id of [...prev.brokers].filter((b) => !next.brokers.includes(b)).sort((a, b) => a - b)) {
    ev({ kind: TimelineKind.BrokerDown, brokerId: id, message: `Broker ${id} left the cluster (no longer in the live brokers)` });
  }
  for (const id of [...next.brokers].filter((b) => !prev.brokers.includes(b)).sort((a, b) => a - b)) {
    ev({ kind: TimelineKind.BrokerUp, brokerId: id, message: `Broker ${id} joined the cluster` });
  }
  if (
    next.controllerId !== prev.controllerId ||
    (next.controllerEpoch !== null && prev.controllerEpoch !== null && next.controllerEpoch !== prev.controllerEpoch)
  ) {
    const epoch = next.controllerEpoch !== null ? ` (controller epoch ${next.controllerEpoch})` : '';
    const message =
      next.controllerId === null
        ? `No controller (was broker ${leaderName(prev.controllerId)})`
        : `Broker ${next.controllerId} elected controller${epoch}${prev.controllerId !== null && prev.controllerId !== next.controllerId ? `, was broker ${prev.controllerId}` : ''}`;
    ev({ kind: TimelineKind.ControllerChange, ...(next.controllerId !== null ? { brokerId: next.controllerId } : {}), message });
  }

  const names = [...new Set([...prev.topics.keys(), ...next.topics.keys()])].sort();
  for (const topic of names) {
    const before = prev.topics.get(topic);
    const after = next.topics.get(topic);
    if (!before && after) {
      ev({ kind: TimelineKind.TopicCreated, topic, message: `Topic ${topic} created with ${after.length} partition${after.length === 1 ? '' : 's'}` });
      continue;
    }
    if (before && !after) {
      ev({ kind: TimelineKind.TopicDeleted, topic, message: `Topic ${topic} deleted` });
      continue;
    }
    if (!before || !after) continue;
    const old = new Map(before.map((p) => [p.partition, p]));
    const elections: NonNullable<TimelineEvent['partitions']> = [];
    const offline: NonNullable<TimelineEvent['partitions']> = [];
    const shrinks: NonNullable<TimelineEvent['partitions']> = [];
    const expands: NonNullable<TimelineEvent['partitions']> = [];
    const added: number[] = [];
    for (const p of after) {
      const o = old.get(p.partition);
      if (!o) {
        added.push(p.partition);
        continue;
      }
      if (o.leader !== p.leader) (p.leader === null ? offline : elections).push({ partition: p.partition, from: o.leader, to: p.leader });
      if (!sameSet(o.isr, p.isr)) {
        const removed = o.isr.some((b) => !p.isr.includes(b));
        const grown = p.isr.some((b) => !o.isr.includes(b));
        const change = { partition: p.partition, from: [...o.isr], to: [...p.isr] };
        if (removed) shrinks.push(change);
        if (grown && !removed) expands.push(change);
      }
    }
    if (added.length > 0) {
      ev({ kind: TimelineKind.PartitionsAdded, topic, message: `Topic ${topic}: partitions added (${added.join(', ')}), now ${after.length}` });
    }
    if (elections.length > 0) {
      const what = some(elections.map((e) => `p${e.partition} ${leaderName(e.from as number | null)}→${leaderName(e.to as number | null)}`));
      const n = elections.length > SHOWN ? ` (${counted(elections.length)})` : '';
      ev({
        kind: TimelineKind.LeaderElection,
        topic,
        partitions: elections,
        message: `Topic ${topic}: new leader${elections.length === 1 ? '' : 's'}${n} ${what}`,
      });
    }
    if (offline.length > 0) {
      const what = some(offline.map((e) => `p${e.partition} (was ${leaderName(e.from as number | null)})`));
      ev({ kind: TimelineKind.PartitionOffline, topic, partitions: offline, message: `Topic ${topic}: no leader for ${what}` });
    }
    if (shrinks.length > 0) {
      const what = some(shrinks.map((e) => `p${e.partition} [${list(e.from as number[])}]→[${list(e.to as number[])}]`));
      const gone = [...new Set(shrinks.flatMap((e) => (e.from as number[]).filter((b) => !(e.to as number[]).includes(b))))].sort((a, b) => a - b);
      ev({
        kind: TimelineKind.IsrShrink,
        topic,
        partitions: shrinks,
        message: `Topic ${topic}: ISR shrank on ${counted(shrinks.length)} (broker${gone.length === 1 ? '' : 's'} ${list(gone)} out): ${what}`,
      });
    }
    if (expands.length > 0) {
      const what = some(expands.map((e) => `p${e.partition} [${list(e.from as number[])}]→[${list(e.to as number[])}]`));
      const back = [...new Set(expands.flatMap((e) => (e.to as number[]).filter((b) => !(e.from as number[]).includes(b))))].sort((a, b) => a - b);
      ev({
        kind: TimelineKind.IsrExpand,
        topic,
        partitions: expands,
        message: `Topic ${topic}: ISR expanded on ${counted(expands.length)} (broker${back.length === 1 ? '' : 's'} ${list(back)} in): ${what}`,
      });
    }
  }
  return out;
}

/** An event for unclean leader elections counted by the controllers' metrics since the last poll. */
export function uncleanElectionEvent(prevCount: number | null, nextCount: number | null, at: number): TimelineEvent | null {
  if (prevCount === null || nextCount === null || nextCount <= prevCount) return null;
  const n = nextCount - prevCount;
  return {
    at,
    kind: TimelineKind.UncleanElection,
    source: 'metrics',
    message: `${n} unclean leader election${n === 1 ? '' : 's'} (kafka_controller_controllerstats_uncleanleaderelections_total)`,
  };
}

/** Adds events keeping the timeline newest first (stable for equal times) and at most `max` long. */
export function addEvents(timeline: TimelineEvent[], events: readonly TimelineEvent[], max: number): void {
  if (events.length === 0) return;
  timeline.unshift(...[...events].reverse());
  // state-change records carry their own (earlier) times
  timeline.sort((a, b) => b.at - a.at);
  if (timeline.length > max) timeline.length = max;
}

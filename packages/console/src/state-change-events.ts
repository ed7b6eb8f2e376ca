/**
 * Timeline events from the brokers' state-change logs (GET /state-change on each metrics
 * endpoint, Kafka's state.change.logger): what the controller decided and why, which metadata
 * snapshots cannot tell — the election strategy (offline, preferred, reassign, controlledShutdown),
 * unclean elections, leader epochs, completed reassignments. Elections of one topic with one
 * strategy in one batch are one event.
 */
import { TimelineKind, type TimelineEvent } from './state.js';

/** A record as GET /state-change returns it (pino fields, without `logger`). */
export interface StateChangeRecord {
  seq: number;
  time: number;
  msg: string;
  [field: string]: unknown;
}

const SHOWN = 8;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const nums = (v: unknown): number[] => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : []);

/** Events for the records one broker (`brokerId`, null when unknown) logged. */
export function eventsFromStateChanges(records: readonly StateChangeRecord[], brokerId: number | null): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  const on = brokerId === null ? 'the controller' : `controller ${brokerId}`;
  const elections = new Map<
    string,
    { at: number; topic: string; strategy: string; unclean: boolean; parts: Array<{ partition: number; leader: number; epoch: number | null }> }
  >();
  for (const r of records) {
    const topic = typeof r['topic'] === 'string' ? r['topic'] : null;
    const partition = num(r['partition']);
    if (r.msg === 'elected leader' && topic !== null && partition !== null) {
      const strategy = typeof r['strategy'] === 'string' ? r['strategy'] : 'unknown';
      const unclean = r['unclean'] === true;
      const key = `${topic}\u0000${strategy}\u0000${unclean}`;
      const e = elections.get(key) ?? { at: r.time, topic, strategy, unclean, parts: [] };
      e.parts.push({ partition, leader: num(r['leader']) ?? -1, epoch: num(r['leaderEpoch']) });
      e.at = Math.max(e.at, r.time);
      elections.set(key, e);
    } else if (r.msg === 'reassignment completed' && topic !== null && partition !== null) {
      out.push({
        at: r.time,
        kind: TimelineKind.ReassignmentCompleted,
        source: 'state-change',
        topic,
        ...(brokerId !== null ? { brokerId } : {}),
        partitions: [{ partition, from: null, to: nums(r['replicas']) }],
        message: `Topic ${topic}: reassignment of p${partition} completed, replicas [${nums(r['replicas']).join(',')}] (${on})`,
      });
    }
  }
  for (const e of elections.values()) {
    const shown = e.parts.slice(0, SHOWN).map((p) => `p${p.partition}→${p.leader}${p.epoch !== null ? ` (epoch ${p.epoch})` : ''}`);
    const more = e.parts.length > SHOWN ? ` … and ${e.parts.length - SHOWN} more` : '';
    out.push({
      at: e.at,
      kind: e.unclean ? TimelineKind.UncleanElection : TimelineKind.LeaderElection,
      source: 'state-change',
      topic: e.topic,
      ...(brokerId !== null ? { brokerId } : {}),
      partitions: e.parts.map((p) => ({ partition: p.partition, from: null, to: p.leader })),
      message: `Topic ${e.topic}: ${on} elected ${e.unclean ? 'UNCLEAN ' : ''}leader${e.parts.length === 1 ? '' : 's'} (${e.strategy}${e.parts.length > SHOWN ? `, ${e.parts.length} partitions` : ''}) ${shown.join(', ')}${more}`,
    });
  }
  return out.sort((a, b) => a.at - b.at);
}

/** Where to ask from next, given the seq asked from and the answer (a restarted broker starts again at 1). */
export function nextStateChangeSeq(since: number, answer: { next: number; last: number }): { since: number; restarted: boolean } {
  if (answer.last < since) return { since: 0, restarted: true };
  return { since: answer.next, restarted: false };
}

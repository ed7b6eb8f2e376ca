import type { TopicPartition } from '@samsa/protocol';
import type { ControllerContext } from './context.js';

/** Kafka's ElectionType (ElectLeaders v1+). */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;
export type ElectionType = (typeof ElectionType)[keyof typeof ElectionType];

/** Error codes the election APIs answer with per partition (Kafka's). */
export const ElectionError = {
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_TOPIC_EXCEPTION: 17,
  PREFERRED_LEADER_NOT_AVAILABLE: 80,
  ELIGIBLE_LEADERS_NOT_AVAILABLE: 83,
  ELECTION_NOT_NEEDED: 84,
} as const;

export interface ElectionOutcome {
  errorCode: number;
  message: string | null;
}

/**
 * Partitions whose preferred replica (first in AR) is not the leader, grouped by preferred broker,
 * with the imbalance ratio per broker (Kafka's checkAndTriggerAutoLeaderRebalance): brokers over
 * `leader.imbalance.per.broker.percentage` get their partitions back when the preferred replica is
 * live and in the ISR.
 */
export function imbalancedPartitions(ctx: ControllerContext, percentage: number): TopicPartition[] {
  const byPreferred = new Map<number, TopicPartition[]>();
  for (const tp of ctx.allPartitions()) {
    if (ctx.topicsToBeDeleted.has(tp.topic)) continue;
    const a = ctx.assignment(tp);
    const preferred = a?.replicas[0];
    if (preferred === undefined || (a && (a.addingReplicas.length > 0 || a.removingReplicas.length > 0))) continue;
    const list = byPreferred.get(preferred) ?? [];
    list.push(tp);
    byPreferred.set(preferred, list);
  }
  const out: TopicPartition[] = [];
  for (const [broker, tps] of byPreferred) {
    const notLed = tps.filter((tp) => ctx.leadershipOf(tp)?.state.leader !== broker);
    const ratio = notLed.length / tps.length;
    if (ratio * 100 <= percentage) continue;
    if (!ctx.isBrokerLive(broker)) continue;
    for (const tp of notLed) {
      const lead = ctx.leadershipOf(tp);
      if (lead && lead.state.isr.includes(broker)) out.push(tp);
    }
  }
  return out;
}

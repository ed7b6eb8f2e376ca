/**
 * partition.assignment.strategy → assignor instances: protocol names (`range`, `roundrobin`,
 * `sticky`, `cooperative-sticky`) and Java class names through the assignors' own
 * `assignorByName`, or PartitionAssignor objects of one's own. One instance per consumer (the
 * sticky assignors remember the member's last assignment).
 */
import { KafkaError } from '@samsa/protocol';
import { ASSIGNOR_NAMES, assignorByName } from './assignors/index.js';
import type { PartitionAssignor } from './assignors/types.js';

/**
 * `isDefault`: the strategy is the default (range, cooperative-sticky); names of built-in assignors
 * not available in this build are then left out instead of failing.
 */
export function createAssignors(strategy: readonly (string | PartitionAssignor)[], isDefault = false): PartitionAssignor[] {
  const out: PartitionAssignor[] = [];
  for (const s of strategy) {
    if (isDefault && typeof s === 'string' && !ASSIGNOR_NAMES.includes(s)) continue;
    if (typeof s !== 'string') {
      out.push(s);
      continue;
    }
    try {
      out.push(assignorByName(s.trim()));
    } catch (err) {
      throw new KafkaError('INVALID_CONFIG', `Invalid value ${s} for configuration partition.assignment.strategy: ${(err as Error).message}`, { cause: err });
    }
  }
  const names = out.map((a) => a.name);
  if (new Set(names).size !== names.length)
    throw new KafkaError('INVALID_CONFIG', `The assignors in partition.assignment.strategy must have distinct names: ${names.join(', ')}`);
  return out;
}

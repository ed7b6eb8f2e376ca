import { RangeAssignor } from './range.js';
import { CooperativeStickyAssignor } from './cooperative-sticky.js';
import { RoundRobinAssignor } from './roundrobin.js';
import { StickyAssignor } from './sticky.js';
import type { PartitionAssignor } from './types.js';

export * from './types.js';
export { RangeAssignor } from './range.js';
export { RoundRobinAssignor } from './roundrobin.js';
export { StickyAssignor, serializeStickyUserData, deserializeStickyUserData } from './sticky.js';
export { CooperativeStickyAssignor, validateCooperativeAssignment } from './cooperative-sticky.js';
export { AbstractStickyAssignor, DEFAULT_GENERATION, type MemberData } from './abstract-sticky.js';

/** The built-in assignors by their protocol name (partition.assignment.strategy short names). */
const FACTORIES: Readonly<Record<string, () => PartitionAssignor>> = {
  range: () => new RangeAssignor(),
  roundrobin: () => new RoundRobinAssignor(),
  sticky: () => new StickyAssignor(),
  'cooperative-sticky': () => new CooperativeStickyAssignor(),
};

/** The assignor names assignorByName knows. */
export const ASSIGNOR_NAMES: readonly string[] = Object.keys(FACTORIES);

/**
 * A new instance of the built-in assignor `name` ('range', 'roundrobin', 'sticky',
 * 'cooperative-sticky'; Java's class names, e.g. org.apache.kafka.clients.consumer.RangeAssignor,
 * are accepted too). Throws on an unknown name. Each consumer needs its own instance: the sticky
 * assignors remember the member's last assignment.
 */
export function assignorByName(name: string): PartitionAssignor {
  const factory = FACTORIES[name] ?? FACTORIES[JAVA_CLASS_NAMES[name] ?? ''];
  if (!factory) throw new Error(`Unknown partition assignor '${name}' (known: ${ASSIGNOR_NAMES.join(', ')})`);
  return factory();
}

const JAVA_CLASS_NAMES: Readonly<Record<string, string>> = {
  'org.apache.kafka.clients.consumer.RangeAssignor': 'range',
  'org.apache.kafka.clients.consumer.RoundRobinAssignor': 'roundrobin',
  'org.apache.kafka.clients.consumer.StickyAssignor': 'sticky',
  'org.apache.kafka.clients.consumer.CooperativeStickyAssignor': 'cooperative-sticky',
};

/**
 * The default partition.assignment.strategy of the Java consumer since Kafka 3.0 (KIP-726):
 * [RangeAssignor, CooperativeStickyAssignor]. Range is chosen while any member lacks
 * cooperative-sticky; dropping range in a later rolling bounce upgrades the group to cooperative.
 */
export const DEFAULT_PARTITION_ASSIGNMENT_STRATEGY: readonly string[] = ['range', 'cooperative-sticky'];

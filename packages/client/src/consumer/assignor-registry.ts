/**
 * partition.assignment.strategy → assignor instances: the protocol names (`range`, `roundrobin`,
 * `sticky`, `cooperative-sticky`), the Java class names (`org.apache.kafka.clients.consumer.RangeAssignor`
 * ...) or PartitionAssignor objects of one's own.
 */
import { KafkaError } from '@samsa/protocol';
import { CooperativeStickyAssignor, RangeAssignor, RoundRobinAssignor, StickyAssignor } from './assignors/index.js';
import type { PartitionAssignor } from './assignors/types.js';

const FACTORIES: Record<string, () => PartitionAssignor> = {
  range: () => new RangeAssignor(),
  roundrobin: () => new RoundRobinAssignor(),
  sticky: () => new StickyAssignor(),
  'cooperative-sticky': () => new CooperativeStickyAssignor(),
};

const JAVA_CLASSES: Record<string, string> = {
  'org.apache.kafka.clients.consumer.RangeAssignor': 'range',
  'org.apache.kafka.clients.consumer.RoundRobinAssignor': 'roundrobin',
  'org.apache.kafka.clients.consumer.StickyAssignor': 'sticky',
  'org.apache.kafka.clients.consumer.CooperativeStickyAssignor': 'cooperative-sticky',
};

export function createAssignors(strategy: readonly (string | PartitionAssignor)[]): PartitionAssignor[] {
  const out: PartitionAssignor[] = [];
  for (const s of strategy) {
    if (typeof s !== 'string') {
      out.push(s);
      continue;
    }
    const name = JAVA_CLASSES[s] ?? s.toLowerCase();
    const f = FACTORIES[name];
    if (!f) throw new KafkaError('INVALID_CONFIG', `Invalid value ${s} for configuration partition.assignment.strategy: Class ${s} cannot be found (known: ${Object.keys(FACTORIES).join(', ')})`);
    out.push(f());
  }
  const names = out.map((a) => a.name);
  if (new Set(names).size !== names.length) throw new KafkaError('INVALID_CONFIG', `The assignors in partition.assignment.strategy must have distinct names: ${names.join(', ')}`);
  return out;
}

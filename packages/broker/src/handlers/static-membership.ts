import { KafkaError } from '@samsa/protocol';
import { IBP_2_3_IV0, LATEST_METADATA_VERSION, isLessThan } from '@samsa/server-common';
import type { BrokerServices } from './services.js';

/**
 * Static membership (group.instance.id) needs inter.broker.protocol.version 2.3 or higher: below
 * it group metadata is written at v2, which has no group.instance.id, so a reloaded group would
 * turn static members dynamic. JoinGroup, SyncGroup, Heartbeat and OffsetCommit with a group
 * instance id are answered UNSUPPORTED_VERSION then, as Kafka's KafkaApis does.
 */
export function checkStaticMembershipSupported(s: BrokerServices, groupInstanceId: string | null): void {
  if (groupInstanceId === null) return;
  const ibp = s.config.interBrokerProtocolVersion ?? LATEST_METADATA_VERSION;
  if (isLessThan(ibp, IBP_2_3_IV0)) {
    throw new KafkaError(
      'UNSUPPORTED_VERSION',
      `Static membership (group.instance.id) needs inter.broker.protocol.version 2.3 or higher; this broker uses ${ibp.version}`,
    );
  }
}

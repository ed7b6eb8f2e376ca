#!/usr/bin/env node
// Prints the raw consumer-protocol bytes (DescribeGroups member metadata = the JoinGroup
// subscription, member assignment = the SyncGroup assignment) of the members of groups, as hex.
// Used to capture golden bytes from real clients (kcat/librdkafka, KafkaJS) for the codec tests in
// packages/client/src/consumer-protocol.test.ts:
//   node scripts/capture-consumer-protocol.mjs <bootstrap> <group> [<group> ...]
import { API_KEYS } from '@samsa/protocol';
import { Cluster, findGroupCoordinator } from '@samsa/client';

const [bootstrap, ...groups] = process.argv.slice(2);
if (!bootstrap || groups.length === 0) {
  console.error('usage: capture-consumer-protocol.mjs <bootstrap> <group>...');
  process.exit(2);
}
const cluster = new Cluster({ bootstrapServers: bootstrap, clientId: 'capture' });
try {
  await cluster.connect();
  for (const group of groups) {
    const node = await findGroupCoordinator(cluster, group);
    const conn = await cluster.connectionTo(node.nodeId);
    const res = await conn.request(API_KEYS.DescribeGroups, { groups: [group], includeAuthorizedOperations: false });
    for (const g of res.body.groups) {
      console.log(JSON.stringify({ group: g.groupId, state: g.groupState, protocol: g.protocolData }));
      for (const m of g.members) {
        console.log(
          JSON.stringify({
            memberId: m.memberId,
            clientId: m.clientId,
            groupInstanceId: m.groupInstanceId,
            metadata: m.memberMetadata.toString('hex'),
            assignment: m.memberAssignment.toString('hex'),
          }),
        );
      }
    }
  }
} finally {
  await cluster.close();
}

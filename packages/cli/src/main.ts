import { Command } from 'commander';
import { registerBrokerCommands } from './commands/broker.js';
import { registerClusterCommands } from './commands/cluster.js';
import { registerTopicsCommand } from './commands/topics.js';
import { registerLeaderElectionCommand } from './commands/leader-election.js';
import { registerConsumerGroupsCommand } from './commands/consumer-groups.js';
import { registerReassignPartitionsCommand } from './commands/reassign-partitions.js';
import { registerDeleteRecordsCommand } from './commands/delete-records.js';
import { registerConfigsCommand } from './commands/configs.js';
import { registerConsoleProducerCommand } from './commands/console-producer.js';
import { registerProducerPerfTestCommand } from './commands/producer-perf-test.js';
import { registerVerifyCommand } from './commands/verify.js';
import { registerChaosCommand } from './commands/chaos.js';
import { registerDumpLogCommand } from './commands/dump-log.js';

const program = new Command();
program.name('samsa').description("Samsa: Apache Kafka's ZooKeeper-mode architecture in TypeScript").version('0.1.0');
registerClusterCommands(program);
registerTopicsCommand(program);
registerLeaderElectionCommand(program);
registerConsumerGroupsCommand(program);
registerReassignPartitionsCommand(program);
registerDeleteRecordsCommand(program);
registerConfigsCommand(program);
registerBrokerCommands(program);
registerConsoleProducerCommand(program);
registerProducerPerfTestCommand(program);
registerVerifyCommand(program);
registerChaosCommand(program);
registerDumpLogCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`samsa: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

import { Command } from 'commander';
import { exitQuietlyOnClosedOutput } from './shared/output.js';

type Register = (program: Command) => void;

/**
 * Each top-level command and the module that defines it, in `samsa --help` order. Only the module
 * of the command being run is loaded (the broker, the console and the client are large: loading
 * all of them cost every invocation half a second of start-up and its JIT work); help, version and
 * unknown commands load them all.
 */
const COMMANDS: ReadonlyArray<readonly [string, () => Promise<Register>]> = [
  ['cluster', async () => (await import('./commands/cluster/cluster.js')).registerClusterCommands],
  ['topics', async () => (await import('./commands/topics/topics.js')).registerTopicsCommand],
  ['leader-election', async () => (await import('./commands/leader-election/leader-election.js')).registerLeaderElectionCommand],
  ['consumer-groups', async () => (await import('./commands/consumer-groups/consumer-groups.js')).registerConsumerGroupsCommand],
  ['reassign-partitions', async () => (await import('./commands/reassign-partitions/reassign-partitions.js')).registerReassignPartitionsCommand],
  ['transactions', async () => (await import('./commands/transactions/transactions.js')).registerTransactionsCommand],
  ['delete-records', async () => (await import('./commands/delete-records/delete-records.js')).registerDeleteRecordsCommand],
  ['configs', async () => (await import('./commands/configs/configs.js')).registerConfigsCommand],
  ['acls', async () => (await import('./commands/acls/acls.js')).registerAclsCommand],
  ['broker', async () => (await import('./commands/broker/broker.js')).registerBrokerCommands],
  ['console-producer', async () => (await import('./commands/console-producer/console-producer.js')).registerConsoleProducerCommand],
  ['producer-perf-test', async () => (await import('./commands/producer-perf-test/producer-perf-test.js')).registerProducerPerfTestCommand],
  ['console-consumer', async () => (await import('./commands/console-consumer/console-consumer.js')).registerConsoleConsumerCommand],
  ['consumer-perf-test', async () => (await import('./commands/consumer-perf-test/consumer-perf-test.js')).registerConsumerPerfTestCommand],
  ['end-to-end-latency', async () => (await import('./commands/end-to-end-latency/end-to-end-latency.js')).registerEndToEndLatencyCommand],
  ['console', async () => (await import('./commands/console/console.js')).registerConsoleCommand],
  ['verify', async () => (await import('./commands/verify/verify.js')).registerVerifyCommand],
  ['chaos', async () => (await import('./commands/chaos/chaos.js')).registerChaosCommand],
  ['dump-log', async () => (await import('./commands/dump-log/dump-log.js')).registerDumpLogCommand],
];

async function main(argv: string[]): Promise<void> {
  const program = new Command();
  program.name('samsa').description("Samsa: Apache Kafka's ZooKeeper-mode architecture in TypeScript").version('0.1.0');
  const invoked = COMMANDS.find(([name]) => name === argv[2]);
  for (const [, load] of invoked ? [invoked] : COMMANDS) (await load())(program);
  await program.parseAsync(argv);
}

exitQuietlyOnClosedOutput();
main(process.argv).catch((err: unknown) => {
  process.stderr.write(`samsa: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

import { afterEach, describe, expect, it } from 'vitest';
import { API_KEYS } from '@samsa/protocol';
import { Cluster } from '../cluster.js';
import { silentLogger } from '../logger.js';
import { FakeCluster } from '../testing/fake-cluster.js';
import { FakeGroup } from '../testing/fake-group.js';
import { readTopic } from './fetch-reader.js';

describe('verify fetch reader', () => {
  let fc: FakeCluster | undefined;
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    await fc?.close();
    cluster = fc = undefined;
  });

  it('verify fetch reader – a topic of many partitions is read with one Metadata request, every partition from its leader', async () => {
    const partitions = 60;
    fc = await FakeCluster.start({ brokers: 1 });
    fc.addTopic(
      'many',
      Array.from({ length: partitions }, () => [0]),
    );
    const g = new FakeGroup(fc, 0);
    for (let p = 0; p < partitions; p++) g.append('many', p, [{ value: `v${p}` }]);
    cluster = new Cluster({ bootstrapServers: fc.bootstrapServers, clientId: 'reader-test' });
    const until = new Map(Array.from({ length: partitions }, (_, p) => [p, 1]));
    const before = fc.broker(0).requestsFor(API_KEYS.Metadata).length;
    const reads = await readTopic(cluster, 'many', until, 10_000, silentLogger);
    expect(reads.map((r) => [r.partition, r.records.map((x) => x.value), r.incomplete])).toEqual(
      Array.from({ length: partitions }, (_, p) => [p, [`v${p}`], null]),
    );
    // the cluster's bootstrap Metadata and readTopic's describe; none per partition
    expect(fc.broker(0).requestsFor(API_KEYS.Metadata).length - before).toBeLessThanOrEqual(2);
  });
});

import { readFileSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BrokerProcess, DEFAULT_NODE_PERFORMANCE_OPTS, brokerNodeFlags } from './broker-process.js';

describe('broker process', () => {
  it('broker process – node flags default to --single-threaded-gc --initial-old-space-size=128; SAMSA_NODE_PERFORMANCE_OPTS replaces them, empty for none', () => {
    expect(DEFAULT_NODE_PERFORMANCE_OPTS).toBe('--single-threaded-gc --initial-old-space-size=128');
    expect(brokerNodeFlags({})).toEqual(['--single-threaded-gc', '--initial-old-space-size=128']);
    expect(brokerNodeFlags({ SAMSA_NODE_PERFORMANCE_OPTS: ' --max-semi-space-size=32  --single-threaded-gc ' })).toEqual([
      '--max-semi-space-size=32',
      '--single-threaded-gc',
    ]);
    expect(brokerNodeFlags({ SAMSA_NODE_PERFORMANCE_OPTS: '' })).toEqual([]);
  });

  it('broker process – the launched command line carries the node flags before the samsa entry point', async () => {
    const b = new BrokerProcess({
      id: 7,
      port: 1,
      controlPort: 2,
      zookeeperConnect: '127.0.0.1:1/x',
      dir: `/tmp/samsa-bp-test-${process.pid}`,
      env: { SAMSA_NODE_PERFORMANCE_OPTS: '--single-threaded-gc --stack-size=900' },
    });
    await b.launch();
    try {
      // what the kernel started, as ps shows it
      const args = readFileSync(`/proc/${b.process!.pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1);
      expect(args.slice(0, 2)).toEqual(['--single-threaded-gc', '--stack-size=900']);
      expect(args[2]).toMatch(/samsa\.js$/);
      expect(args.slice(3, 5)).toEqual(['broker', 'start']);
    } finally {
      await b.kill();
      rmSync(`/tmp/samsa-bp-test-${process.pid}`, { recursive: true, force: true });
    }
  });
});

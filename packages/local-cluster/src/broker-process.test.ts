import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
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

  it('broker process – `samsa broker` runs with a libuv thread pool of 32 unless UV_THREADPOOL_SIZE says otherwise', async () => {
    const threadsOf = async (env: Record<string, string>): Promise<number> => {
      const dir = `/tmp/samsa-bp-pool-${process.pid}-${Object.keys(env).length}`;
      const b = new BrokerProcess({ id: 7, port: 1, controlPort: 2, zookeeperConnect: '127.0.0.1:1/x', dir, env });
      await b.launch();
      try {
        const count = (): number => readdirSync(`/proc/${b.process!.pid}/task`).length;
        // the pool starts its threads at the first file operation (log dirs, meta.properties)
        await vi.waitFor(() => expect(count()).toBeGreaterThan(env.UV_THREADPOOL_SIZE ? 8 : 32), { timeout: 15_000, interval: 50 });
        return count();
      } finally {
        await b.kill();
        rmSync(dir, { recursive: true, force: true });
      }
    };
    // main thread and V8's helpers, plus the pool: 32 threads only fit the larger pool
    expect(await threadsOf({})).toBeGreaterThan(32);
    expect(await threadsOf({ UV_THREADPOOL_SIZE: '6' })).toBeLessThan(32);
  });

  it('broker process – extraListeners are appended to listeners, advertised.listeners and listener.security.protocol.map', () => {
    const b = new BrokerProcess({
      id: 1,
      port: 9092,
      controlPort: 19092,
      securityProtocol: 'SASL_SSL',
      controlSecurityProtocol: 'SSL',
      extraListeners: [{ name: 'MTLS', securityProtocol: 'SSL', port: 29092 }],
      zookeeperConnect: '127.0.0.1:2181/x',
      dir: '/tmp/unused',
    });
    const p = b.properties();
    expect(p['listeners']).toBe('SASL_SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:19092,MTLS://127.0.0.1:29092');
    expect(p['advertised.listeners']).toBe(p['listeners']);
    expect(p['listener.security.protocol.map']).toBe('SASL_SSL:SASL_SSL,CONTROLLER:SSL,MTLS:SSL');
    expect(p['security.inter.broker.protocol']).toBe('SASL_SSL');
  });
});

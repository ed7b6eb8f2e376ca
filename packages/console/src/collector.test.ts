import { createServer } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ClusterCollector } from './collector.js';

/** A loopback port with nothing listening on it. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('console collector', () => {
  it('console collector – a dead bootstrap gives the unreachable state with what to do, and subscribers hear it', async () => {
    const port = await deadPort();
    const c = new ClusterCollector({ bootstrapServers: `127.0.0.1:${port}`, operationTimeoutMs: 300, logger: pino({ level: 'silent' }) });
    expect(c.state.status).toBe('connecting');
    const seen: string[] = [];
    c.onUpdate((s) => seen.push(s.status));
    await c.pollOnce();
    await c.pollOnce();
    await c.stop();
    expect(seen).toEqual(['unreachable', 'unreachable']);
    expect(c.state.error!.message).toContain(`Cannot reach the cluster at 127.0.0.1:${port}`);
    expect(c.state.error!.message).toContain('ECONNREFUSED');
    expect(c.state.error!.hint).toContain('samsa cluster status');
    expect(c.state.error!.since).toBeLessThanOrEqual(c.state.updatedAt);
    expect(c.state.brokers).toEqual([]);
  });
});

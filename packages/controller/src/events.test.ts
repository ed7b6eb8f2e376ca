import { describe, expect, it } from 'vitest';
import { ControllerEventManager, type ControllerEvent } from './events.js';

describe('controller events', () => {
  it('controller events – each event is processed fully before the next starts', async () => {
    const log: string[] = [];
    let active = 0;
    let maxActive = 0;
    const done = new Promise<void>((resolve) => {
      const mgr = new ControllerEventManager(
        async (e) => {
          active++;
          maxActive = Math.max(maxActive, active);
          log.push(`start ${e.type}`);
          await new Promise((r) => setTimeout(r, 5));
          await Promise.resolve();
          log.push(`end ${e.type}`);
          active--;
          if (e.type === 'TopicChange') resolve();
        },
        () => undefined,
      );
      mgr.start();
      const events: ControllerEvent[] = [{ type: 'Startup' }, { type: 'BrokerChange' }, { type: 'TopicChange' }];
      for (const e of events) mgr.put(e);
    });
    await done;
    expect(maxActive).toBe(1);
    expect(log).toEqual(['start Startup', 'end Startup', 'start BrokerChange', 'end BrokerChange', 'start TopicChange', 'end TopicChange']);
  });

  it('controller events – a failing event is reported and the loop goes on', async () => {
    const errors: string[] = [];
    const seen: string[] = [];
    const mgr = new ControllerEventManager(
      async (e) => {
        seen.push(e.type);
        if (e.type === 'BrokerChange') throw new Error('boom');
      },
      (e, err) => errors.push(`${e.type}: ${(err as Error).message}`),
    );
    mgr.start();
    mgr.put({ type: 'BrokerChange' });
    mgr.put({ type: 'TopicChange' });
    for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    await mgr.close();
    expect(seen).toEqual(['BrokerChange', 'TopicChange']);
    expect(errors).toEqual(['BrokerChange: boom']);
  });
});

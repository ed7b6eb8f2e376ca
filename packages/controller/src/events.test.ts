import { ErrorCode, TopicPartitionMap } from '@samsa/protocol';
import { ControllerMovedError } from '@samsa/zk-paths';
import { describe, expect, it } from 'vitest';
import { callErrorCode } from './controller-calls.js';
import { ControllerEventManager, type ControllerCallEvent, type ControllerEvent } from './events.js';

/** One event of each type with a caller, and the error codes each caller was answered with. */
function callers(): { events: ControllerCallEvent[]; answers: Array<[string, number]> } {
  const answers: Array<[string, number]> = [];
  const events: ControllerCallEvent[] = [
    { type: 'ReplicaLeaderElection', partitions: null, electionType: 0, callback: (_r, code) => answers.push(['ReplicaLeaderElection', code]) },
    { type: 'ControlledShutdown', brokerId: 1, brokerEpoch: 5n, callback: (code) => answers.push(['ControlledShutdown', code]) },
    { type: 'ApiPartitionReassignment', reassignments: [], callback: (_r, code) => answers.push(['ApiPartitionReassignment', code]) },
    { type: 'ListPartitionReassignments', partitions: null, callback: (_r, code) => answers.push(['ListPartitionReassignments', code]) },
  ];
  return { events, answers };
}

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
};

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

  it('controller events – close answers every queued caller NOT_CONTROLLER and lets the event in progress finish', async () => {
    const { events, answers } = callers();
    const blocker = gate();
    const started = gate();
    let finished = false;
    const mgr = new ControllerEventManager(
      async (e) => {
        if (e.type !== 'Startup') throw new Error(`${e.type} must not be processed after close`);
        started.open();
        await blocker.opened;
        finished = true;
      },
      () => undefined,
    );
    mgr.start();
    mgr.put({ type: 'Startup' });
    for (const e of events) mgr.put(e);
    await started.opened;
    const closing = mgr.close();
    // answered at close, before the event in progress ends
    expect(answers).toEqual(events.map((e) => [e.type, ErrorCode.NOT_CONTROLLER]));
    blocker.open();
    await closing;
    expect(finished).toBe(true);
  });

  it('controller events – a caller put after close (or before start) is answered NOT_CONTROLLER at once', async () => {
    const { events, answers } = callers();
    const mgr = new ControllerEventManager(
      async () => undefined,
      () => undefined,
    );
    for (const e of events) mgr.put(e);
    expect(answers).toEqual(events.map((e) => [e.type, ErrorCode.NOT_CONTROLLER]));
    mgr.start();
    await mgr.close();
    answers.length = 0;
    for (const e of events) mgr.put(e);
    expect(answers).toEqual(events.map((e) => [e.type, ErrorCode.NOT_CONTROLLER]));
  });

  it('controller events – clearAndPut (session expiry) answers the dropped callers NOT_CONTROLLER and runs the new event', async () => {
    const { events, answers } = callers();
    const blocker = gate();
    const started = gate();
    const expired = gate();
    const mgr = new ControllerEventManager(
      async (e) => {
        if (e.type === 'Startup') {
          started.open();
          await blocker.opened;
        } else if (e.type === 'Expire') expired.open();
        else throw new Error(`${e.type} must have been dropped`);
      },
      () => undefined,
    );
    mgr.start();
    mgr.put({ type: 'Startup' });
    for (const e of events) mgr.put(e);
    await started.opened;
    mgr.clearAndPut({ type: 'Expire' });
    expect(answers).toEqual(events.map((e) => [e.type, ErrorCode.NOT_CONTROLLER]));
    blocker.open();
    await expired.opened;
    await mgr.close();
  });

  it('controller events – a caller whose event throws is answered: NOT_CONTROLLER when the controller moved, else UNKNOWN_SERVER_ERROR', async () => {
    const { events, answers } = callers();
    const failures: string[] = [];
    const mgr = new ControllerEventManager(
      async (e) => {
        if (e.type === 'ReplicaLeaderElection' || e.type === 'ApiPartitionReassignment') throw new ControllerMovedError('epoch znode changed');
        throw new Error('boom');
      },
      (e) => failures.push(e.type),
      undefined,
      callErrorCode,
    );
    mgr.start();
    const all = Promise.all(
      events.map(
        (e) =>
          new Promise<void>((resolve) => {
            const cb = e.callback as (...a: unknown[]) => void;
            mgr.put({ ...e, callback: (...a: unknown[]) => (cb(...a), resolve()) } as ControllerEvent);
          }),
      ),
    );
    await all;
    await mgr.close();
    expect(failures).toEqual(events.map((e) => e.type));
    expect(new Map(answers)).toEqual(
      new Map([
        ['ReplicaLeaderElection', ErrorCode.NOT_CONTROLLER],
        ['ControlledShutdown', ErrorCode.UNKNOWN_SERVER_ERROR],
        ['ApiPartitionReassignment', ErrorCode.NOT_CONTROLLER],
        ['ListPartitionReassignments', ErrorCode.UNKNOWN_SERVER_ERROR],
      ]),
    );
  });

  it('controller events – a caller answered before its event throws is not answered again', async () => {
    const answers: number[] = [];
    const done = gate();
    const mgr = new ControllerEventManager(
      async (e) => {
        if (e.type !== 'ReplicaLeaderElection') return;
        e.callback(new TopicPartitionMap(), ErrorCode.NONE);
        throw new Error('failed after answering');
      },
      () => done.open(),
    );
    mgr.start();
    mgr.put({ type: 'ReplicaLeaderElection', partitions: null, electionType: 0, callback: (_r, code) => answers.push(code) });
    await done.opened;
    await mgr.close();
    expect(answers).toEqual([ErrorCode.NONE]);
  });
});

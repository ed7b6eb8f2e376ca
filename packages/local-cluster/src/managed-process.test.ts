import { describe, expect, it } from 'vitest';
import { inNetns } from './managed-process.js';

describe('managed process', () => {
  it('inNetns – without a namespace the command is unchanged; with one it runs under `ip netns exec NS`', () => {
    expect(inNetns(undefined, 'java', ['-cp', 'x'])).toEqual({ command: 'java', args: ['-cp', 'x'] });
    expect(inNetns('samsa7-b0', '/usr/bin/node', ['samsa.js', 'broker', 'start', 'p'])).toEqual({
      command: 'ip',
      args: ['netns', 'exec', 'samsa7-b0', '/usr/bin/node', 'samsa.js', 'broker', 'start', 'p'],
    });
  });
});
